package dev.gpucloud.agent.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.tracing.LoggedSpan;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The agent's part of a job's trace: a START whose record names a parent span is carried out in a child span, and
 * the allocation's events (STARTED, its usage, EXITED) are published under that span; a START outside any trace, or
 * with a traceparent that cannot be read, runs as ever and its events carry none.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class AllocationTraceTest {

    private static final Duration WAIT = Duration.ofSeconds(45);
    private static final Path SPAN_LOG = Path.of("target/spans/node-agent.jsonl");
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SCHEDULER_SPAN = "00f067aa0ba902b7";

    @Inject
    AgentConfig config;

    private static ProducerRecord<String, byte[]> record(NodeCommand command, String traceparent) {
        ProducerRecord<String, byte[]> record = EventRecords.record(Topics.NODE_COMMANDS, command.nodeId(), command,
                "/test/scheduler");
        if (traceparent != null) {
            record.headers().add(Traceparent.HEADER, traceparent.getBytes(StandardCharsets.UTF_8));
        }
        return record;
    }

    @Test
    void a_traced_start_publishes_the_allocations_events_in_its_trace_and_an_untraced_one_publishes_them_as_ever() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String node = config.sim().nodePrefix() + "-h100-0";
        String run = UUID.randomUUID().toString().substring(0, 8);
        NodeCommand traced = CommandSender.start(node, "traced-" + run, List.of(1), List.of("sleep", "2"));
        NodeCommand untraced = CommandSender.start(node, "untraced-" + run, List.of(2), List.of("sleep", "2"));
        NodeCommand garbled = CommandSender.start(node, "garbled-" + run, List.of(3), List.of("sleep", "2"));

        try (TestKafka kafka = new TestKafka();
                TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name());
                TopicTail usage = kafka.tail(Topics.USAGE_EVENTS.name())) {
            kafka.send(record(traced, "00-" + TRACE + "-" + SCHEDULER_SPAN + "-01"));
            kafka.send(record(untraced, null));
            kafka.send(record(garbled, "00-" + TRACE + "-not-a-span-id"));

            List<ConsumerRecord<String, byte[]>> lifecycle = events.until(r -> r.key().equals(traced.jobId()),
                    seen -> seen.size() >= 2, WAIT);
            assertThat(lifecycle).extracting(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r).type())
                    .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
            assertThat(lifecycle).allSatisfy(r ->
                    assertThat(Traceparent.traceId(TopicTail.header(r, Traceparent.HEADER))).isEqualTo(TRACE));
            List<ConsumerRecord<String, byte[]>> billed = usage.until(r -> r.key().equals(traced.allocationId()),
                    seen -> !seen.isEmpty(), WAIT);
            assertThat(billed).allSatisfy(r ->
                    assertThat(Traceparent.traceId(TopicTail.header(r, Traceparent.HEADER))).isEqualTo(TRACE));

            for (NodeCommand plain : List.of(untraced, garbled)) {
                List<ConsumerRecord<String, byte[]>> its = events.until(r -> r.key().equals(plain.jobId()),
                        seen -> seen.size() >= 2, WAIT);
                assertThat(its).extracting(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r).type())
                        .as(plain.allocationId()).containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
                assertThat(its).allSatisfy(r -> assertThat(TopicTail.header(r, Traceparent.HEADER)).isNull());
            }

            // the span log: node.commands START is the scheduler span's child, each publish a child of it
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                List<LoggedSpan> spans = LoggedSpan.read(SPAN_LOG).spans().stream()
                        .filter(s -> s.traceId().equals(TRACE)).toList();
                LoggedSpan start = spans.stream().filter(s -> s.name().equals("node.commands START")
                        && traced.allocationId().equals(s.attribute("allocation_id"))).findFirst().orElseThrow();
                assertThat(start.parentSpanId()).isEqualTo(SCHEDULER_SPAN);
                assertThat(start.kind()).isEqualTo("CONSUMER");
                assertThat(start.attribute("node_id")).isEqualTo(node);
                List<LoggedSpan> published = spans.stream().filter(s -> start.spanId().equals(s.parentSpanId()))
                        .toList();
                assertThat(published).extracting(LoggedSpan::name).contains("allocation.events publish",
                        "usage.events publish");
                assertThat(lifecycle).allSatisfy(r -> assertThat(published).extracting(LoggedSpan::spanId)
                        .contains(TopicTail.header(r, Traceparent.HEADER).split("-")[2]));
                assertThat(spans).noneMatch(s -> garbled.allocationId().equals(s.attribute("allocation_id")));
            });
        }
    }
}
