package dev.gpucloud.agent.nvml;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import dev.gpucloud.testsupport.KafkaTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.agent.cloud.FakeMetadataServer;
import dev.gpucloud.agent.cloud.FakeMetadataServer.Reply;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.UUID;

/** The whole agent with gpucloud.agent.backend=auto on a host whose libnvidia-ml is the fake one. */
@QuarkusTest
@TestProfile(NvmlAgentTest.FakeNvmlHost.class)
class NvmlAgentTest {

    static FakeMetadataServer metadata;

    static final String NODE = "nvml-" + Long.toString(new SecureRandom().nextLong(36L * 36 * 36 * 36 * 36 * 36), 36);

    /** The fake library, installed in a folder of its own, and the real broker. */
    public static class FakeNvmlHost implements QuarkusTestProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(KafkaTestResource.class), new TestResourceEntry(FakeLibrary.class));
        }
    }

    /** Installs the fake libnvidia-ml and points the agent at it. */
    public static class FakeLibrary implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            try {
                Path dir = FakeNvml.install(Files.createTempDirectory("fake-nvml-agent"), "xid=1:79");
                metadata = new FakeMetadataServer().aws()
                        .reply("GET /latest/meta-data/placement/availability-zone", Reply.text("us-east-1f"));
                Files.createDirectories(dir.resolve("datasets/imagenet-1k"));
                Files.createDirectories(dir.resolve("datasets/c4-en"));
                Path port = Files.createDirectories(dir.resolve("sys/class/infiniband/mlx5_0/ports/1"));
                Files.writeString(port.resolve("state"), "4: ACTIVE\n");
                Files.writeString(port.resolve("link_layer"), "InfiniBand\n");
                Files.writeString(port.resolve("rate"), "400 Gb/sec (4X NDR)\n");
                return Map.ofEntries(Map.entry("gpucloud.agent.backend", "auto"),
                        Map.entry("gpucloud.agent.nvml.library-path", dir.toString()),
                        Map.entry("gpucloud.agent.nvidia-smi.path", dir.resolve("no-nvidia-smi").toString()),
                        Map.entry("gpucloud.agent.id", NODE),
                        Map.entry("gpucloud.agent.host.node-id", NODE),
                        Map.entry("gpucloud.agent.host.instance-type", "p5.48xlarge"),
                        Map.entry("gpucloud.agent.host.capacity-type", "spot"),
                        Map.entry("gpucloud.agent.host.switch-path", "spine-1,leaf-3"),
                        Map.entry("gpucloud.agent.runner.dir", dir.resolve("runs").toString()),
                        Map.entry("gpucloud.agent.runner.stop-grace", "1s"),
                        Map.entry("gpucloud.agent.host.dataset-cache-dir", dir.resolve("datasets").toString()),
                        Map.entry("gpucloud.agent.host.sysfs-root", dir.resolve("sys").toString()),
                        Map.entry("gpucloud.agent.cloud.provider", "aws"),
                        Map.entry("gpucloud.agent.cloud.endpoint", metadata.url()),
                        Map.entry("gpucloud.agent.cloud.poll-interval", "1s"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
            if (metadata != null) {
                metadata.close();
            }
        }
    }

    @Test
    void theAgentDescribesTheRealHostThroughNvml() {
        given().get("/agent/hosts").then().statusCode(200)
                .body("", hasSize(1))
                .body("[0].nodeId", equalTo(NODE))
                .body("[0].backend", equalTo("nvml"))
                .body("[0].instanceType", equalTo("p5.48xlarge"))
                .body("[0].capacityType", equalTo("SPOT"))
                .body("[0].switchPath", contains("spine-1", "leaf-3"))
                .body("[0].gpuCount", equalTo(3))
                .body("[0].gpuModel", equalTo("NVIDIA H100 80GB HBM3,NVIDIA A10G"))
                .body("[0].zone", equalTo("us-east-1f"))
                .body("[0].cachedDatasets", contains("c4-en", "imagenet-1k"))
                .body("[0].rdmaPorts[0].device", equalTo("mlx5_0"))
                .body("[0].rdmaPorts[0].state", equalTo("ACTIVE"))
                .body("[0].rdmaPorts[0].rateGbps", equalTo(400.0f));
    }

    @Test
    void anXidFromNvmlsEventSetIsOnNodeEvents() {
        try (TestKafka kafka = new TestKafka(); TopicTail nodeEvents = kafka.tailFromBeginning(Topics.NODE_EVENTS.name())) {
            List<NodeEvent> xids = nodeEvents.until(r -> r.key().equals(NODE) && TopicTail.decode(Topics.NODE_EVENTS,
                            r).type() == NodeEventType.XID_ERROR, seen -> !seen.isEmpty(), Duration.ofSeconds(30))
                    .stream().map(r -> TopicTail.decode(Topics.NODE_EVENTS, r)).toList();
            assertThat(xids).singleElement().satisfies(e -> {
                assertThat(e.xid()).isEqualTo(79);
                assertThat(e.gpuIndex()).isEqualTo(1);
            });
        }
    }

    @Test
    void aSpotInterruptionNoticeIsOnNodeEventsWithinSeconds() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        try (TestKafka kafka = new TestKafka(); TopicTail nodeEvents = kafka.tail(Topics.NODE_EVENTS.name())) {
            metadata.reply("GET /latest/meta-data/spot/instance-action",
                    Reply.json("{\"action\": \"terminate\", \"time\": \"2030-01-01T00:02:00Z\"}"));
            List<NodeEvent> events = nodeEvents.until(r -> r.key().equals(NODE) && TopicTail.decode(Topics.NODE_EVENTS,
                            r).type() == NodeEventType.SPOT_INTERRUPTION, seen -> !seen.isEmpty(), Duration.ofSeconds(30))
                    .stream().map(r -> TopicTail.decode(Topics.NODE_EVENTS, r)).toList();
            assertThat(events).singleElement().satisfies(e -> {
                assertThat(e.type()).isEqualTo(NodeEventType.SPOT_INTERRUPTION);
                assertThat(e.deadline()).isEqualTo(Instant.parse("2030-01-01T00:02:00Z"));
            });
        }
    }

    @Test
    void aMigSlotStartRunsOnTheInstanceThatNvmlPlacesThere() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String alloc = "slot-" + UUID.randomUUID().toString().substring(0, 8);
        NodeCommand start = new NodeCommand(UUID.randomUUID().toString(), NodeCommandType.START, NODE, alloc,
                "job-" + alloc, "test-tenant", List.of(1), "3g.40gb@4", 0, 0, 1, null, List.of("true"), Map.of(), null,
                null, null, Instant.now());
        try (TestKafka kafka = new TestKafka(); TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            kafka.send(EventRecords.record(Topics.NODE_COMMANDS, NODE, start, "/test/scheduler"));
            List<AllocationEvent> lifecycle = events.until(r -> r.key().equals(start.jobId()),
                            seen -> seen.stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r))
                                    .anyMatch(e -> e.type() == AllocationEventType.EXITED), Duration.ofSeconds(45))
                    .stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
            assertThat(lifecycle).extracting(AllocationEvent::type)
                    .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
            assertThat(lifecycle.get(0).migInstanceUuid())
                    .as("the fake's 3g.40gb sits at slice 4, as nvmlGpuInstanceGetInfo says")
                    .isEqualTo("MIG-00000001-0000-2222-3333-444444444444");
            assertThat(lifecycle.get(1).exitCode()).isZero();
        }
    }

    @Test
    void aStartOnTheRealHostRunsAProcessAndReportsItsExitCodeAndUsage() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        String alloc = "proc-" + UUID.randomUUID().toString().substring(0, 8);
        NodeCommand start = new NodeCommand(UUID.randomUUID().toString(), NodeCommandType.START, NODE, alloc,
                "job-" + alloc, "test-tenant", List.of(0), null, 0, 0, 1, null,
                List.of("bash", "-c", "echo \"gpus=$CUDA_VISIBLE_DEVICES\"; sleep 1.5; exit 4"), Map.of(), null, null,
                null, Instant.now());
        try (TestKafka kafka = new TestKafka();
                TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name());
                TopicTail usage = kafka.tail(Topics.USAGE_EVENTS.name())) {
            kafka.send(EventRecords.record(Topics.NODE_COMMANDS, NODE, start, "/test/scheduler"));
            List<AllocationEvent> lifecycle = events.until(r -> r.key().equals(start.jobId()),
                            seen -> seen.stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r))
                                    .anyMatch(e -> e.type() == AllocationEventType.EXITED), Duration.ofSeconds(45))
                    .stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
            assertThat(lifecycle).extracting(AllocationEvent::type)
                    .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
            assertThat(lifecycle.get(0).detail()).contains("GPUs [0] as ").contains("pid ");
            AllocationEvent exited = lifecycle.get(1);
            assertThat(exited.exitCode()).isEqualTo(4);
            List<UsageEvent> intervals = usage.until(r -> r.key().equals(alloc),
                            seen -> seen.stream().map(r -> TopicTail.decode(Topics.USAGE_EVENTS, r))
                                    .anyMatch(u -> u.to().equals(exited.occurredAt())), Duration.ofSeconds(45))
                    .stream().map(r -> TopicTail.decode(Topics.USAGE_EVENTS, r))
                    .sorted(Comparator.comparing(UsageEvent::from)).toList();
            assertThat(intervals.get(0).from()).isEqualTo(lifecycle.get(0).occurredAt());
            for (int i = 1; i < intervals.size(); i++) {
                assertThat(intervals.get(i).from()).isEqualTo(intervals.get(i - 1).to());
            }
            assertThat(intervals.get(intervals.size() - 1).to()).isEqualTo(exited.occurredAt());
        }
    }
}
