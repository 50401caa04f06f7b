package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.XidPolicy;
import dev.gpucloud.scheduler.spot.SpotPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What an event about a host ({@code node.events}) does, decided in memory: the fleet takes it in at once
 * (a drain, a spot notice, a quarantine, a lost heartbeat), and the outcome names the work the adapter
 * must move off the host. A spot notice drains the host, marks its pool to avoid, and asks every job on it
 * to checkpoint by the cloud's deadline; a rebalance recommendation does the same by the preemption grace;
 * a GPU fault that {@link XidPolicy} calls critical keeps new work off the host for the quarantine, and any
 * other XID is the workload's own (its exit says so); a lost heartbeat loses the host's allocations.
 */
public final class NodeEvents {

    /** The durations the rules need, from the scheduler's configuration. */
    public record Settings(Duration spotNotice, Duration preemptionGrace, Duration xidQuarantine) {
        public Settings {
            Objects.requireNonNull(spotNotice, "spotNotice");
            Objects.requireNonNull(preemptionGrace, "preemptionGrace");
            Objects.requireNonNull(xidQuarantine, "xidQuarantine");
        }
    }

    /**
     * {@code said}: what to log ({@code alarming}: as a warning); {@code checkpoint}: the jobs to ask to
     * checkpoint and stop by {@code deadlineMillis}; {@code lost}: the allocations lost; {@code why} names the
     * cause in both.
     */
    public record Outcome(String said, boolean alarming, List<String> checkpoint, long deadlineMillis,
            List<String> lost, String why) {

        static Outcome said(String said, boolean alarming) {
            return new Outcome(said, alarming, List.of(), 0, List.of(), null);
        }
    }

    private NodeEvents() {
    }

    public static Outcome apply(Fleet fleet, SpotPolicy spot, NodeEvent event, long nowMillis, Settings settings) {
        String node = event.nodeId();
        return switch (event.type()) {
            case DRAIN, UNDRAIN -> {
                boolean draining = event.type() == NodeEventType.DRAIN;
                fleet.drain(node, draining);
                yield Outcome.said("host " + node + (draining ? " drains" : " accepts work again"), false);
            }
            case SPOT_INTERRUPTION -> {
                long deadline = event.deadline() != null ? event.deadline().toEpochMilli()
                        : nowMillis + settings.spotNotice().toMillis();
                fleet.interruption(node, deadline);
                fleet.node(node).ifPresent(n -> spot.interrupted(n.pool(), nowMillis));
                yield new Outcome("spot interruption notice for " + node + ", reclaimed at "
                        + Instant.ofEpochMilli(deadline), false, fleet.jobsOn(node), deadline, List.of(),
                        "spot interruption on " + node);
            }
            case REBALANCE_RECOMMENDATION -> {
                fleet.rebalance(node, nowMillis);
                yield new Outcome("rebalance recommended for " + node + ": moving its work off proactively", false,
                        fleet.jobsOn(node), nowMillis + settings.preemptionGrace().toMillis(), List.of(),
                        "rebalance recommended for " + node);
            }
            case XID_ERROR, ECC_ERROR -> {
                XidPolicy.Fault fault = XidPolicy.judge(event.type(), event.xid());
                if (!fault.critical()) {
                    yield Outcome.said("XID " + fault.xid() + " on " + node + " GPU " + event.gpuIndex()
                            + " (an application error; the host stays in service)", false);
                }
                fleet.criticalXid(node, fault.xid(), event.occurredAt().toEpochMilli());
                yield Outcome.said("critical XID " + fault.xid() + " on " + node + " GPU " + event.gpuIndex()
                        + ": no new work there for " + settings.xidQuarantine(), true);
            }
            case HEARTBEAT_LOST -> {
                fleet.lost(node);
                List<String> lost = fleet.assignmentsOn(node).stream().map(Assignment::allocationId).toList();
                yield new Outcome("host " + node + " lost its heartbeat; " + lost.size() + " allocation(s) on it are"
                        + " lost", true, List.of(), 0, lost, "host " + node + " lost its heartbeat");
            }
        };
    }
}
