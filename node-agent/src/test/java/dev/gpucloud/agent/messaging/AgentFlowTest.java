package dev.gpucloud.agent.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.hasSize;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent against the real broker: what it publishes, and what it does with node.commands. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class AgentFlowTest {

    private static final Duration WAIT = Duration.ofSeconds(45);

    @Inject
    AgentConfig config;

    @Inject
    HostReporter reporter;

    private TestKafka kafka;
    private CommandSender sender;

    @BeforeEach
    void agentIsReady() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().get("/q/health/ready").then().statusCode(200));
        kafka = new TestKafka();
        sender = new CommandSender(kafka);
    }

    @AfterEach
    void closeKafka() {
        kafka.close();
    }

    private String node(String stem) {
        return config.sim().nodePrefix() + "-" + stem + "-0";
    }

    private List<String> allNodes() {
        return List.of(node("a100"), node("h100"), node("a10g"), node("v100-spot"), node("h100-mig"));
    }

    private static String allocation() {
        return "alloc-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static List<AllocationEvent> eventsOf(List<ConsumerRecord<String, byte[]>> records) {
        return records.stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
    }

    private static List<UsageEvent> usageOf(List<ConsumerRecord<String, byte[]>> records) {
        return records.stream().map(r -> TopicTail.decode(Topics.USAGE_EVENTS, r))
                .sorted(Comparator.comparing(UsageEvent::from)).toList();
    }

    private static boolean hasEvent(List<ConsumerRecord<String, byte[]>> records, AllocationEventType type) {
        return eventsOf(records).stream().anyMatch(e -> e.type() == type);
    }

    /** The usage records seen cover [from, to) exactly: contiguous, no overlap, no gap. */
    private static void assertTiles(List<UsageEvent> usage, java.time.Instant from, java.time.Instant to) {
        assertThat(usage).isNotEmpty();
        assertThat(usage.get(0).from()).isEqualTo(from);
        for (int i = 1; i < usage.size(); i++) {
            assertThat(usage.get(i).from()).as("interval %d starts where %d ends", i, i - 1)
                    .isEqualTo(usage.get(i - 1).to());
        }
        assertThat(usage.get(usage.size() - 1).to()).isEqualTo(to);
    }

    private static boolean covers(List<UsageEvent> usage, java.time.Instant to) {
        return usage.stream().anyMatch(u -> u.to().equals(to));
    }

    @Test
    void everyHostIsDescribedOnGpuInventory() {
        List<String> nodes = allNodes();
        try (TopicTail inventory = kafka.tailFromBeginning(Topics.GPU_INVENTORY.name())) {
            List<ConsumerRecord<String, byte[]>> records = inventory.until(
                    r -> nodes.contains(r.key()) && r.value() != null,
                    seen -> seen.stream().map(ConsumerRecord::key).collect(Collectors.toSet()).containsAll(nodes), WAIT);

            Map<String, HostInventory> hosts = records.stream().map(r -> TopicTail.decode(Topics.GPU_INVENTORY, r))
                    .collect(Collectors.toMap(HostInventory::nodeId, h -> h, (a, b) -> b));
            HostInventory a100 = hosts.get(node("a100"));
            assertThat(a100.instanceType()).isEqualTo("p4d.24xlarge");
            assertThat(a100.gpus()).hasSize(8).allSatisfy(g -> {
                assertThat(g.model()).isEqualTo("A100-SXM4-40GB");
                assertThat(g.nvlinkIsland()).isZero();
            });
            assertThat(a100.rdmaFabric()).isEqualTo("a");
            assertThat(a100.switchPath()).containsExactly("spine-1", "leaf-1");
            assertThat(a100.priceMicrosPerHour()).isEqualTo(21_960_000L);
            assertThat(hosts.get(node("v100-spot")).capacityType()).isEqualTo(CapacityType.SPOT);
            assertThat(hosts.get(node("a10g")).gpus()).singleElement()
                    .satisfies(g -> assertThat(g.memoryMib()).isEqualTo(23_028L));
            assertThat(records).allSatisfy(r -> {
                assertThat(TopicTail.header(r, CloudEventHeaders.TYPE)).isEqualTo(Topics.GPU_INVENTORY.eventType());
                assertThat(TopicTail.header(r, CloudEventHeaders.SOURCE)).isEqualTo("/node-agent/" + r.key());
            });
        }
    }

    @Test
    void hostsLeaveTheInventoryWithATombstoneAndComeBack() {
        List<String> nodes = allNodes();
        try (TopicTail inventory = kafka.tail(Topics.GPU_INVENTORY.name())) {
            reporter.leave().await().atMost(WAIT);
            List<ConsumerRecord<String, byte[]>> tombstones = inventory.until(
                    r -> nodes.contains(r.key()) && r.value() == null, seen -> seen.size() >= nodes.size(), WAIT);
            assertThat(tombstones).extracting(ConsumerRecord::key).containsExactlyInAnyOrderElementsOf(nodes);
            assertThat(tombstones).allSatisfy(r -> assertThat(TopicTail.header(r, CloudEventHeaders.ID)).isNotBlank());

            reporter.announce().await().atMost(WAIT);
            inventory.until(r -> nodes.contains(r.key()) && r.value() != null, seen -> seen.size() >= nodes.size(), WAIT);
        }
    }

    @Test
    void everyHostSendsTelemetryEverySampleInterval() {
        List<String> nodes = allNodes();
        try (TopicTail telemetry = kafka.tail(Topics.GPU_TELEMETRY.name())) {
            List<ConsumerRecord<String, byte[]>> records = telemetry.until(r -> nodes.contains(r.key()),
                    seen -> nodes.stream().allMatch(n -> seen.stream().filter(r -> r.key().equals(n)).count() >= 2),
                    WAIT);
            TelemetrySample a100 = TopicTail.decode(Topics.GPU_TELEMETRY, records.stream()
                    .filter(r -> r.key().equals(node("a100"))).findFirst().orElseThrow());
            assertThat(a100.gpus()).hasSize(8).allSatisfy(g -> {
                assertThat(g.model()).isEqualTo("A100-SXM4-40GB");
                assertThat(g.powerWatts()).isPositive();
                assertThat(g.energyMillijoules()).isPositive();
            });
            assertThat(records.stream().map(r -> TopicTail.header(r, CloudEventHeaders.ID)).distinct().count())
                    .isEqualTo(records.size());
        }
    }

    @Test
    void aStartRunsItsSleepReportsTiledUsageAndExitsZero() {
        String alloc = allocation();
        NodeCommand start = CommandSender.start(node("a100"), alloc, List.of(0, 1), List.of("sleep", "3"));
        try (TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name());
                TopicTail usage = kafka.tail(Topics.USAGE_EVENTS.name())) {
            sender.send(start);
            sender.send(start); // a redelivery: same commandId, ignored

            List<AllocationEvent> lifecycle = eventsOf(events.until(r -> r.key().equals(start.jobId()),
                    seen -> hasEvent(seen, AllocationEventType.EXITED), WAIT));
            assertThat(lifecycle).extracting(AllocationEvent::type)
                    .containsExactly(AllocationEventType.STARTED, AllocationEventType.EXITED);
            AllocationEvent started = lifecycle.get(0);
            AllocationEvent exited = lifecycle.get(1);
            assertThat(exited.exitCode()).isZero();
            assertThat(Duration.between(started.occurredAt(), exited.occurredAt())).isEqualTo(Duration.ofSeconds(3));
            assertThat(exited.nodeId()).isEqualTo(node("a100"));

            List<UsageEvent> intervals = usageOf(usage.until(r -> r.key().equals(alloc),
                    seen -> covers(usageOf(seen), exited.occurredAt()), WAIT));
            assertTiles(intervals, started.occurredAt(), exited.occurredAt());
            assertThat(intervals).allSatisfy(u -> {
                assertThat(u.sku()).isEqualTo(Sku.wholeGpu("A100-SXM4-40GB"));
                assertThat(u.units()).isEqualTo(2);
                assertThat(u.tenant()).isEqualTo("test-tenant");
                assertThat(u.capacityType()).isEqualTo(CapacityType.ON_DEMAND);
                assertThat(u.zone()).isEqualTo("local-1a");
            });
            assertThat(intervals).hasSizeGreaterThanOrEqualTo(3);
        }
    }

    @Test
    void aStopEndsTheRunAt143AndItsUsageThere() {
        String alloc = allocation();
        NodeCommand start = CommandSender.start(node("h100"), alloc, List.of(5), List.of("sleep", "600"));
        try (TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name());
                TopicTail usage = kafka.tail(Topics.USAGE_EVENTS.name())) {
            sender.send(start);
            events.until(r -> r.key().equals(start.jobId()), seen -> hasEvent(seen, AllocationEventType.STARTED), WAIT);
            given().get("/agent/hosts").then().statusCode(200);
            sender.send(CommandSender.command(NodeCommandType.STOP, node("h100"), alloc, null));

            List<AllocationEvent> lifecycle = eventsOf(events.until(r -> r.key().equals(start.jobId()),
                    seen -> hasEvent(seen, AllocationEventType.EXITED), WAIT));
            AllocationEvent exited = lifecycle.get(lifecycle.size() - 1);
            assertThat(exited.exitCode()).isEqualTo(143);
            assertThat(Duration.between(lifecycle.get(0).occurredAt(), exited.occurredAt())).isLessThan(Duration.ofSeconds(60));

            List<UsageEvent> intervals = usageOf(usage.until(r -> r.key().equals(alloc),
                    seen -> covers(usageOf(seen), exited.occurredAt()), WAIT));
            assertTiles(intervals, lifecycle.get(0).occurredAt(), exited.occurredAt());
        }
    }

    @Test
    void aCheckpointIsSavedUnderTheGivenDirectory() {
        String alloc = allocation();
        NodeCommand start = CommandSender.start(node("a100"), alloc, List.of(4), List.of("sleep", "600"));
        try (TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            sender.send(start);
            events.until(r -> r.key().equals(start.jobId()), seen -> hasEvent(seen, AllocationEventType.STARTED), WAIT);
            sender.send(CommandSender.command(NodeCommandType.CHECKPOINT, node("a100"), alloc, "s3://ckpt/" + alloc));

            AllocationEvent saved = eventsOf(events.until(r -> r.key().equals(start.jobId()),
                    seen -> hasEvent(seen, AllocationEventType.CHECKPOINT_SAVED), WAIT)).stream()
                    .filter(e -> e.type() == AllocationEventType.CHECKPOINT_SAVED).findFirst().orElseThrow();
            assertThat(saved.checkpointPath()).startsWith("s3://ckpt/" + alloc + "/");

            sender.send(CommandSender.command(NodeCommandType.STOP, node("a100"), alloc, null));
            events.until(r -> r.key().equals(start.jobId()), seen -> hasEvent(seen, AllocationEventType.EXITED), WAIT);
        }
    }

    @Test
    void aStartOnBusyGpusIsLostNamingTheHolderAndOnMissingOnesExitsNonZero() {
        String holder = allocation();
        String busy = allocation();
        String missing = allocation();
        NodeCommand hold = CommandSender.start(node("a10g"), holder, List.of(0), List.of("sleep", "600"));
        NodeCommand onBusy = CommandSender.start(node("a10g"), busy, List.of(0), List.of("sleep", "1"));
        NodeCommand onMissing = CommandSender.start(node("a10g"), missing, List.of(3), List.of("sleep", "1"));
        try (TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            sender.send(hold);
            events.until(r -> r.key().equals(hold.jobId()), seen -> hasEvent(seen, AllocationEventType.STARTED), WAIT);
            sender.send(onBusy);
            sender.send(onMissing);

            List<String> jobs = List.of(onBusy.jobId(), onMissing.jobId());
            Map<String, AllocationEvent> refused = eventsOf(events.until(r -> jobs.contains(r.key()),
                    seen -> seen.size() >= 2, WAIT)).stream()
                    .collect(Collectors.toMap(AllocationEvent::allocationId, e -> e));
            assertThat(refused.get(busy).type()).as("the placement's doing, not the job's").isEqualTo(
                    AllocationEventType.LOST);
            assertThat(refused.get(busy).heldBy()).containsExactly(holder);
            assertThat(refused.get(busy).detail()).contains("GPU 0").contains("busy with " + holder);
            assertThat(refused.get(missing).type()).isEqualTo(AllocationEventType.EXITED);
            assertThat(refused.get(missing).exitCode()).isNotZero();
            assertThat(refused.get(missing).detail()).contains("GPU 3 does not exist");

            sender.send(CommandSender.command(NodeCommandType.STOP, node("a10g"), holder, null));
            events.until(r -> r.key().equals(hold.jobId()), seen -> hasEvent(seen, AllocationEventType.EXITED), WAIT);
        }
    }

    @Test
    void hostsEndpointListsTheFleetAndWhatRunsOnIt() {
        String alloc = allocation();
        NodeCommand start = CommandSender.start(node("v100-spot"), alloc, List.of(0), List.of("sleep", "600"));
        try (TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            sender.send(start);
            events.until(r -> r.key().equals(start.jobId()), seen -> hasEvent(seen, AllocationEventType.STARTED), WAIT);

            given().get("/agent/hosts").then().statusCode(200)
                    // hasItems, not all: FaultInjectionTest may already have lost the a10g-spot host
                    .body("nodeId", org.hamcrest.Matchers.hasItems(allNodes().toArray(new String[0])))
                    .body("find { it.nodeId == '" + node("v100-spot") + "' }.allocations", hasSize(1))
                    .body("find { it.nodeId == '" + node("v100-spot") + "' }.allocations[0].allocationId",
                            org.hamcrest.Matchers.equalTo(alloc))
                    .body("find { it.nodeId == '" + node("a100") + "' }.gpuCount", org.hamcrest.Matchers.equalTo(8));

            sender.send(CommandSender.command(NodeCommandType.STOP, node("v100-spot"), alloc, null));
            events.until(r -> r.key().equals(start.jobId()), seen -> hasEvent(seen, AllocationEventType.EXITED), WAIT);
        }
        assertThat(Objects.requireNonNull(config.id())).startsWith("test-");
    }
}
