package dev.gpucloud.agent;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The simulation, the runner and backend boundaries and the NVML backend are plain Java: the framework stays in the adapters. */
class ArchitectureTest {

    private static final JavaClasses AGENT = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.gpucloud.agent");

    private static final String[] FRAMEWORKS = {
        "io.quarkus..", "io.smallrye..", "io.vertx..", "jakarta..", "javax..", "org.eclipse.microprofile..",
        "org.apache.kafka..", "org.jboss..", "org.hibernate..", "io.micrometer..", "dev.gpucloud.contracts.kafka.."
    };

    @Test
    void simulationImportsNoFramework() {
        noClasses().that().resideInAPackage("dev.gpucloud.agent.sim..")
                .should().dependOnClassesThat().resideInAnyPackage(FRAMEWORKS)
                .check(AGENT);
    }

    @Test
    void runnerAndBackendBoundariesImportNoFramework() {
        noClasses().that().resideInAnyPackage("dev.gpucloud.agent.runner..", "dev.gpucloud.agent.backend..",
                        "dev.gpucloud.agent.nvml..", "dev.gpucloud.agent.spool..", "dev.gpucloud.agent.cloud..",
                        "dev.gpucloud.agent.inventory..")
                .should().dependOnClassesThat().resideInAnyPackage(FRAMEWORKS)
                .check(AGENT);
    }

    @Test
    void theCoreDoesNotReachIntoTheAdapters() {
        noClasses().that().resideInAnyPackage("dev.gpucloud.agent.sim..", "dev.gpucloud.agent.runner..",
                        "dev.gpucloud.agent.backend..", "dev.gpucloud.agent.nvml..", "dev.gpucloud.agent.spool..",
                        "dev.gpucloud.agent.cloud..", "dev.gpucloud.agent.inventory..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.gpucloud.agent.messaging..",
                        "dev.gpucloud.agent.rest..", "dev.gpucloud.agent.config..", "dev.gpucloud.agent.health..")
                .check(AGENT);
    }
}
