package dev.gpucloud.contracts;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The event records and the agents' secret seal are plain Java: only the kafka adapter package may touch Kafka. */
class PureCodeBoundaryTest {

    @Test
    void event_records_import_no_framework() {
        var classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.gpucloud.contracts.events", "dev.gpucloud.contracts.limits",
                        "dev.gpucloud.contracts.secrets");

        noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "io.quarkus..", "jakarta.enterprise..", "jakarta.inject..", "io.vertx..", "org.hibernate..",
                        "org.apache.kafka..", "io.smallrye..", "io.grpc..")
                .because("event payloads are shared by every service and by plain-Java cores")
                .check(classes);
    }
}
