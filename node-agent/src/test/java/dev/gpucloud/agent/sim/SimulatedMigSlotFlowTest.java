package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.agent.messaging.UniqueAgentResource;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * A START naming a MIG slot, as the scheduler sends it, through the real broker to the agent's
 * simulated h100-mig host: STARTED on allocation.events names the instance made for the slot, and
 * a slot the GPU cannot have is answered with EXITED 125 and the reason.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = UniqueAgentResource.class, scope = TestResourceScope.GLOBAL)
class SimulatedMigSlotFlowTest {

    private static final Duration WAIT = Duration.ofSeconds(45);

    @Inject
    AgentConfig config;

    @Inject
    SimulatedFleet fleet;

    private NodeCommand start(String node, String alloc, int gpu, String slot) {
        return new NodeCommand(UUID.randomUUID().toString(), NodeCommandType.START, node, alloc, "job-" + alloc,
                "test-tenant", List.of(gpu), slot, 0, 0, 1, null, List.of("sleep", "1"), Map.of(), null, null, null,
                Instant.now());
    }

    @Test
    void aSlotStartRunsOnTheInstanceMadeForItAndABadSlotIsRefused() {
        String node = config.sim().nodePrefix() + "-h100-mig-0";
        String good = "slot-" + UUID.randomUUID().toString().substring(0, 8);
        String bad = "slot-" + UUID.randomUUID().toString().substring(0, 8);
        try (TestKafka kafka = new TestKafka(); TopicTail events = kafka.tail(Topics.ALLOCATION_EVENTS.name())) {
            kafka.send(EventRecords.record(Topics.NODE_COMMANDS, node, start(node, good, 7, "3g.40gb@4"), "/test/scheduler"));
            kafka.send(EventRecords.record(Topics.NODE_COMMANDS, node, start(node, bad, 7, "3g.40gb@2"), "/test/scheduler"));

            List<AllocationEvent> seen = events.until(r -> r.key().equals("job-" + good) || r.key().equals("job-" + bad),
                    records -> decoded(records).stream().filter(e -> e.type() == AllocationEventType.EXITED).count() >= 2,
                    WAIT).stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();

            AllocationEvent started = seen.stream()
                    .filter(e -> e.allocationId().equals(good) && e.type() == AllocationEventType.STARTED).findFirst()
                    .orElseThrow();
            String uuid = fleet.inventory().stream().filter(h -> h.nodeId().equals(node)).findFirst().orElseThrow()
                    .gpus().get(7).migInstances().stream()
                    .filter(m -> m.profile().equals("3g.40gb") && Integer.valueOf(4).equals(m.placementStart()))
                    .findFirst().orElseThrow().uuid();
            assertThat(started.migInstanceUuid()).isEqualTo(uuid);
            assertThat(seen).filteredOn(e -> e.allocationId().equals(bad)).singleElement().satisfies(e -> {
                assertThat(e.exitCode()).isEqualTo(SimulatedFleet.EXIT_CANNOT_START);
                assertThat(e.detail()).contains("profile 3g.40gb cannot start at slice 2");
            });
        }
    }

    private static List<AllocationEvent> decoded(List<ConsumerRecord<String, byte[]>> records) {
        return records.stream().map(r -> TopicTail.decode(Topics.ALLOCATION_EVENTS, r)).toList();
    }
}
