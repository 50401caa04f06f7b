package dev.gpucloud.billing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The billing fold is plain Java: the build fails the moment it imports a framework. */
class ArchitectureTest {

    private static final JavaClasses BILLING = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.gpucloud.billing");

    @Test
    void the_fold_imports_no_framework() {
        noClasses().that().resideInAPackage("dev.gpucloud.billing.fold..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "io.quarkus..", "jakarta..", "javax..", "io.vertx..", "org.hibernate..", "org.apache.kafka..",
                        "io.smallrye..", "io.micrometer..", "org.jboss..", "org.eclipse.microprofile..",
                        "com.fasterxml..")
                .because("the billing fold is plain Java, tested without a framework (docs/billing.md)")
                .check(BILLING);
    }

    /** The limits table is plain Java too: the fold checks a manual adjustment against the bounds every edge uses. */
    @Test
    void the_fold_depends_only_on_the_jdk_the_event_contracts_the_limits_and_the_gpu_geometry() {
        classes().that().resideInAPackage("dev.gpucloud.billing.fold..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        "java..", "dev.gpucloud.billing.fold..", "dev.gpucloud.contracts.events..",
                        "dev.gpucloud.contracts.limits..", "dev.gpucloud.geometry..")
                .check(BILLING);
    }

    @Test
    void the_fold_knows_nothing_of_its_adapters() {
        noClasses().that().resideInAPackage("dev.gpucloud.billing.fold..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gpucloud.billing.messaging..",
                        "dev.gpucloud.billing.rest..", "dev.gpucloud.billing.repository..", "dev.gpucloud.billing.config..")
                .check(BILLING);
    }
}
