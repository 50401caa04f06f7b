package dev.gpucloud.agent.sim;

import dev.gpucloud.agent.runner.GpuLedger;
import dev.gpucloud.agent.runner.UsageMeter;
import dev.gpucloud.agent.runner.RunningAllocation;
import dev.gpucloud.contracts.events.NodeCommand;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One allocation's simulated run: it holds its claim on the host from {@code startedAt} until
 * {@code endsAt} (or until stopped), then exits with its planned code. Checkpoints requested while
 * it runs are saved a moment later.
 */
final class SimulatedRun {

    /** A checkpoint being saved: it is reported at {@code savedAt} if the run still runs then. */
    record PendingSave(Instant savedAt, String path, String commandId) {
    }

    final NodeCommand start;
    /** Where this run's worker writes what it says; null when the fleet's runs say nothing. */
    java.nio.file.Path output;
    final SimulatedHost host;
    final GpuLedger.Claim claim;
    final RunPlan plan;
    final Instant startedAt;
    final Instant endsAt;
    final UsageMeter meter;
    final List<PendingSave> saves = new ArrayList<>();
    int checkpoints;
    /** Nothing about this run falls due before this instant (its end, its next usage boundary, a save). */
    Instant nextDue;

    SimulatedRun(NodeCommand start, SimulatedHost host, GpuLedger.Claim claim, RunPlan plan, Instant startedAt,
            UsageMeter meter) {
        this.start = start;
        this.host = host;
        this.claim = claim;
        this.plan = plan;
        this.startedAt = startedAt;
        this.endsAt = startedAt.plus(plan.duration());
        this.meter = meter;
        this.nextDue = startedAt;
    }

    String allocationId() {
        return start.allocationId();
    }

    RunningAllocation view() {
        return new RunningAllocation(start.allocationId(), start.jobId(), start.tenant(), host.nodeId(),
                claim.gpuIndices(), claim.migInstanceUuid(), claim.sku(), claim.units(), startedAt, endsAt,
                meter.reportedUntil());
    }
}
