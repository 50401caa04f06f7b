package dev.gpucloud.agent.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.RawRecords;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Bad records on node.commands: the agent dead-letters those addressed to its hosts (or to no host)
 * with the reason, skips those addressed to another agent's host, and keeps carrying out commands.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class CommandDeadLetterTest {

    private static final Duration WAIT = Duration.ofSeconds(45);

    @Inject
    AgentConfig config;

    /** A record for partition 0, so the agent reads them in the order sent. */
    private static ProducerRecord<String, byte[]> raw(String key, String value, boolean headers) {
        ProducerRecord<String, byte[]> record = RawRecords.record(Topics.NODE_COMMANDS.name(), 0, key, value);
        return headers ? RawRecords.withHeaders(record, Topics.NODE_COMMANDS, "/test/hostile") : record;
    }

    /** The JSON object with a "marker" field added first, so a test can find its own records. */
    private static String labelled(String json, String label) {
        return "{\"marker\":\"" + label + "\"" + (json.equals("{}") ? "}" : "," + json.substring(1));
    }

    @Test
    void badCommandsAreDeadLetteredWithTheReasonAndTheAgentGoesOn() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String ours = config.sim().nodePrefix() + "-a100-0";
        String foreign = "elsewhere-" + config.sim().nodePrefix() + "-a100-0";
        String marker = UUID.randomUUID().toString();
        NodeCommand valid = CommandSender.start(ours, "alloc-after-" + marker.substring(0, 8), List.of(6),
                List.of("sleep", "1"));
        String validJson = EventCodec.encodeToString(valid);
        String missingField = validJson.replace("\"allocationId\":\"" + valid.allocationId() + "\",", "");
        assertThat(missingField).doesNotContain("allocationId");

        try (TestKafka kafka = new TestKafka();
                TopicTail dlq = kafka.deadLetters(Topics.NODE_COMMANDS);
                TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            kafka.send(raw(foreign, "not json " + marker + "/foreign", true));
            kafka.send(raw(ours, "not json " + marker + "/garbage", true));
            kafka.send(raw(ours, labelled(missingField, marker + "/missing-field"), true));
            kafka.send(raw(ours, labelled(validJson, marker + "/no-headers"), false));
            kafka.send(raw(null, labelled("{}", marker + "/no-key"), true));
            kafka.send(raw(ours, null, true));
            ProducerRecord<String, byte[]> after = EventRecords.record(Topics.NODE_COMMANDS, ours, valid, "/test/scheduler");
            kafka.send(new ProducerRecord<>(after.topic(), 0, after.key(), after.value(), after.headers()));

            List<ConsumerRecord<String, byte[]>> dead = dlq.until(
                    r -> (ours.equals(r.key()) || r.key() == null) && (r.value() == null
                            || new String(r.value(), StandardCharsets.UTF_8).contains(marker)),
                    // Other agents on the shared broker dead-letter the no-key record too: wait for every label.
                    seen -> seen.stream().anyMatch(r -> r.value() == null)
                            && Stream.of("garbage", "missing-field", "no-headers", "no-key").allMatch(label -> seen
                                    .stream().anyMatch(r -> r.value() != null && new String(r.value(),
                                            StandardCharsets.UTF_8).contains(marker + "/" + label))), WAIT);
            Function<String, String> reasonFor = label -> dead.stream()
                    .filter(r -> label.equals("tombstone") ? r.value() == null
                            : r.value() != null && new String(r.value(), StandardCharsets.UTF_8).contains(marker + "/" + label))
                    .map(TopicTail::deadLetterReason).findFirst().orElseThrow(() -> new AssertionError("no " + label));
            assertThat(reasonFor.apply("garbage")).contains("node.commands").contains("not valid JSON");
            assertThat(reasonFor.apply("missing-field")).contains("allocationId");
            assertThat(reasonFor.apply("no-headers")).contains("missing required header 'ce_");
            assertThat(reasonFor.apply("no-key")).contains("no key");
            assertThat(reasonFor.apply("tombstone")).contains("no value");

            List<AllocationEvent> lifecycle = events.until(r -> r.key().equals(valid.jobId()),
                    seen -> seen.size() >= 2, WAIT).stream()
                    .map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
            assertThat(lifecycle).extracting(AllocationEvent::type)
                    .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);

            dlq.drain();
            assertThat(dlq.matching(r -> foreign.equals(r.key()))).as("another agent's bad record is not ours to dead-letter")
                    .isEmpty();
        }
    }
}
