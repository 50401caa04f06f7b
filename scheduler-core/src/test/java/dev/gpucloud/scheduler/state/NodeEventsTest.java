package dev.gpucloud.scheduler.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.TestFleet;
import dev.gpucloud.scheduler.spot.SpotPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What each event about a host does to the fleet and to the work on it, as a table. */
class NodeEventsTest {

    private static final long NOW = TestFleet.NOW;
    private static final NodeEvents.Settings SETTINGS = new NodeEvents.Settings(Duration.ofSeconds(120),
            Duration.ofSeconds(30), Duration.ofMinutes(10));

    /** Host h1 (spot) runs job-b's worker and two workers of job-a; h2 runs nothing. */
    private static Fleet fleet() {
        Fleet fleet = TestFleet.host("h2").gpus(8).add(TestFleet.host("h1").spot(9_000_000).gpus(8).add(new Fleet()));
        fleet.reserve(Assignment.whole("a-r0", "job-b", "t", 0, "h1", List.of(0), 0, 0));
        fleet.reserve(Assignment.whole("b-r0", "job-a", "t", 0, "h1", List.of(1), 0, 0));
        fleet.reserve(Assignment.whole("b-r1", "job-a", "t", 1, "h1", List.of(2), 0, 0));
        return fleet;
    }

    private static NodeEvent event(String node, NodeEventType type, Instant deadline, Integer xid) {
        return new NodeEvent(node, type, Instant.ofEpochMilli(NOW - 1000), deadline, xid == null ? null : 3, xid,
                null);
    }

    record Row(String what, NodeEvent event, List<String> checkpoint, long deadline, List<String> lost,
            boolean alarming, Predicate<NodeState> host) {
        @Override
        public String toString() {
            return what;
        }
    }

    private static Arguments row(String what, NodeEvent event, List<String> checkpoint, long deadline,
            List<String> lost, boolean alarming, Predicate<NodeState> host) {
        return Arguments.of(new Row(what, event, checkpoint, deadline, lost, alarming, host));
    }

    static Stream<Arguments> table() {
        return Stream.of(
                row("a drain keeps new work off", event("h1", NodeEventType.DRAIN, null, null), List.of(), 0, List.of(),
                        false, NodeState::draining),
                row("an undrain takes work again", event("h1", NodeEventType.UNDRAIN, null, null), List.of(), 0,
                        List.of(), false, n -> !n.draining()),
                row("a spot notice asks every job on the host to checkpoint by the cloud's deadline",
                        event("h1", NodeEventType.SPOT_INTERRUPTION, Instant.ofEpochMilli(NOW + 90_000), null),
                        List.of("job-a", "job-b"), NOW + 90_000, List.of(), false,
                        n -> n.interruptionDeadlineMillis() == NOW + 90_000),
                row("a rebalance recommendation moves the work off by the preemption grace",
                        event("h1", NodeEventType.REBALANCE_RECOMMENDATION, null, null), List.of("job-a", "job-b"),
                        NOW + 30_000, List.of(), false, n -> n.rebalanceAtMillis() == NOW),
                row("a notice for a host that runs nothing moves nothing",
                        event("h2", NodeEventType.SPOT_INTERRUPTION, Instant.ofEpochMilli(NOW + 90_000), null), List.of(),
                        NOW + 90_000, List.of(),
                        false, n -> true),
                row("a critical XID quarantines the host and leaves its work running",
                        event("h1", NodeEventType.XID_ERROR, null, 79), List.of(), 0, List.of(), true,
                        n -> n.lastCriticalXid() == 79 && n.lastCriticalXidMillis() == NOW - 1000),
                row("an application XID leaves the host in service", event("h1", NodeEventType.XID_ERROR, null, 13),
                        List.of(), 0, List.of(), false, n -> n.lastCriticalXid() == 0),
                row("an ECC error is critical whatever XID it names", event("h1", NodeEventType.ECC_ERROR, null, 13),
                        List.of(), 0, List.of(), true, n -> n.lastCriticalXid() == 13),
                row("a lost heartbeat loses every allocation on the host",
                        event("h1", NodeEventType.HEARTBEAT_LOST, null, null), List.of(), 0,
                        List.of("a-r0", "b-r0", "b-r1"), true, n -> n.lastHeardMillis() == NodeState.NEVER));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void eachEventDoesWhatTheRulesSay(Row r) {
        Fleet fleet = fleet();

        NodeEvents.Outcome o = NodeEvents.apply(fleet, SpotPolicy.defaults(), r.event(), NOW, SETTINGS);

        assertThat(o.checkpoint()).as("jobs asked to checkpoint").isEqualTo(r.checkpoint());
        if (!r.checkpoint().isEmpty() || r.event().type() == NodeEventType.SPOT_INTERRUPTION) {
            assertThat(o.deadlineMillis()).as("deadline").isEqualTo(r.deadline());
        }
        assertThat(o.lost()).as("allocations lost").containsExactlyInAnyOrderElementsOf(r.lost());
        assertThat(o.alarming()).as("logged as a warning").isEqualTo(r.alarming());
        assertThat(o.said()).contains(r.event().nodeId());
        assertThat(fleet.node(r.event().nodeId())).get().matches(r.host(), "the host as the event left it");
    }

    @Test
    void aSpotNoticeMarksTheHostsPoolToAvoid() {
        Fleet fleet = fleet();
        SpotPolicy spot = SpotPolicy.defaults();
        String pool = fleet.node("h1").orElseThrow().pool();

        NodeEvents.apply(fleet, spot, event("h1", NodeEventType.SPOT_INTERRUPTION, Instant.ofEpochMilli(NOW + 90_000),
                null), NOW, SETTINGS);

        assertThat(spot.avoidedPools(NOW + 1)).contains(pool);
    }

    @Test
    void anEventForAnUnknownHostChangesNothing() {
        Fleet fleet = fleet();

        NodeEvents.Outcome o = NodeEvents.apply(fleet, SpotPolicy.defaults(),
                event("nowhere", NodeEventType.HEARTBEAT_LOST, null, null), NOW, SETTINGS);

        assertThat(o.lost()).isEmpty();
        assertThat(fleet.node("nowhere")).isEmpty();
        assertThat(fleet.assignments()).hasSize(3);
    }
}
