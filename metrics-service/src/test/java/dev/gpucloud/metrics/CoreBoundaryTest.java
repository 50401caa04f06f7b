package dev.gpucloud.metrics;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/** The GPU series rules and the platform fold are plain Java: no framework, no Kafka, no Micrometer; adapters wrap them. */
class CoreBoundaryTest {

    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.gpucloud.metrics");

    @Test
    void the_gpu_and_platform_packages_import_no_framework() {
        ArchRule rule = noClasses().that().resideInAnyPackage("dev.gpucloud.metrics.gpu..", "dev.gpucloud.metrics.platform..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "io.quarkus..", "jakarta..", "javax..", "io.vertx..", "io.smallrye..", "io.micrometer..",
                        "io.prometheus..", "org.apache.kafka..", "org.eclipse.microprofile..", "org.jboss..",
                        "org.hibernate..", "com.fasterxml..", "io.netty..", "dev.gpucloud.contracts.kafka..",
                        "dev.gpucloud.metrics.exporter..", "dev.gpucloud.metrics.messaging..",
                        "dev.gpucloud.metrics.config..")
                .because("the series rules run and are tested without Quarkus (DESIGN.md: pure core, thin adapters)");
        rule.check(CLASSES);
    }

    @Test
    void the_gpu_package_is_not_empty() {
        // Guards the rule above against passing vacuously after a package rename.
        ArchRule rule = com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes()
                .that().haveSimpleName("GpuFleet").should().resideInAPackage("dev.gpucloud.metrics.gpu");
        rule.check(CLASSES);
    }
}
