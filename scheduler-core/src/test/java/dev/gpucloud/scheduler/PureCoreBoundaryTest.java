package dev.gpucloud.scheduler;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** scheduler-core is plain Java: the build fails if it imports a framework. */
class PureCoreBoundaryTest {

    @Test
    void scheduler_core_imports_no_framework() {
        var classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.gpucloud.scheduler");

        noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "io.quarkus..", "jakarta..", "javax.inject..", "io.vertx..", "org.hibernate..",
                        "org.apache.kafka..", "io.smallrye..", "io.grpc..", "io.micrometer..")
                .because("placement, queue and lifecycle are pure logic, tested with plain JUnit")
                .check(classes);
    }
}
