package dev.gpucloud.geometry;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The geometry library is shared by plain cores and Quarkus services alike: it uses the JDK and nothing else. */
class GeometryBoundaryTest {

    @Test
    void geometry_depends_on_the_jdk_only() {
        var imported = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.gpucloud.geometry");

        classes().should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.gpucloud.geometry..")
                .because("scheduler-core, node-agent, billing and contracts all build on it")
                .check(imported);
    }
}
