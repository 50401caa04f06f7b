package dev.gpucloud.autoscaler;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The decision core runs in the service and in the simulator alike, so it depends on the JDK and itself only. */
class CoreBoundaryTest {

    @Test
    void the_core_depends_on_the_jdk_only() {
        var imported = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.gpucloud.autoscaler.core");

        classes().should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.gpucloud.autoscaler.core..")
                .because("the simulator drives the same decisions on a virtual clock, without a provider or framework")
                .check(imported);
    }
}
