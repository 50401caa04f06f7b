package dev.gpucloud.agent.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * With JSON logs on (as the Kubernetes manifests run the agent), a line about an allocation carries its job, host
 * and allocation as fields, and every line names the service: what a log pipeline indexes, so that one job's lines
 * are found across the services by a query (docs/operations.md, "Logs"). The lines go to a file here, in the same
 * JSON format the console gets, so that the test can read them.
 */
@QuarkusTest
@TestProfile(JsonLogTest.JsonLogs.class)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class JsonLogTest {

    static final Path LOG = Path.of("target", "json-log-test-" + UUID.randomUUID() + ".log");

    public static class JsonLogs implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.log.file.enabled", "true", "quarkus.log.file.path", LOG.toString(),
                    "quarkus.log.file.json.enabled", "true",
                    "quarkus.log.file.json.additional-field.service.value", "node-agent");
        }
    }

    @Inject
    AgentConfig config;

    @Test
    void a_line_about_an_allocation_carries_its_job_host_and_allocation_as_fields() throws Exception {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String node = config.sim().nodePrefix() + "-a100-0";
        String allocation = "alloc-" + UUID.randomUUID().toString().substring(0, 8);
        NodeCommand start = CommandSender.start(node, allocation, List.of(0), List.of("sleep", "1"));
        try (TestKafka kafka = new TestKafka()) {
            new CommandSender(kafka).send(start);
            ObjectMapper json = new ObjectMapper();
            await().atMost(Duration.ofSeconds(45)).untilAsserted(() -> {
                JsonNode started = lines(json).stream()
                        .filter(l -> l.path("message").asText().startsWith("started " + allocation)).findFirst()
                        .orElseThrow(() -> new AssertionError("no JSON line says " + allocation + " started"));
                assertThat(started.path("service").asText()).isEqualTo("node-agent");
                assertThat(started.path("mdc").path("job_id").asText()).isEqualTo(start.jobId());
                assertThat(started.path("mdc").path("node_id").asText()).isEqualTo(node);
                assertThat(started.path("mdc").path("allocation_id").asText()).isEqualTo(allocation);
            });
            // the fields end with the line they describe: the agent's next lines about nothing in particular lack them
            assertThat(lines(json)).filteredOn(l -> l.path("message").asText().startsWith("spooling"))
                    .allSatisfy(l -> assertThat(l.path("mdc").has("job_id")).isFalse());
        }
    }

    private static List<JsonNode> lines(ObjectMapper json) throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        if (Files.exists(LOG)) {
            for (String line : Files.readAllLines(LOG)) {
                if (!line.isBlank()) {
                    lines.add(json.readTree(line));
                }
            }
        }
        return lines;
    }
}
