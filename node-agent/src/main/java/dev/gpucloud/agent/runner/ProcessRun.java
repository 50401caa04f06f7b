package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.NodeCommand;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** One allocation's child process, what it holds, and what has been asked of it. */
final class ProcessRun {

    /** A checkpoint asked for and not yet reported by the workload. */
    record PendingCheckpoint(String commandId, Instant deadline) {
    }

    final NodeCommand start;
    final GpuLedger host;
    final GpuLedger.Claim claim;
    final Process process;
    final Instant startedAt;
    final Path checkpointDir;
    final Path log;
    final UsageMeter meter;
    final List<PendingCheckpoint> checkpoints = new ArrayList<>();
    /** Set by the process's exit callback: when it was seen to exit. */
    volatile Instant exitedAt;
    String stopCommand;
    Instant stopAt;
    Instant killAt;
    boolean killed;

    ProcessRun(NodeCommand start, GpuLedger host, GpuLedger.Claim claim, Process process, Instant startedAt,
            Path checkpointDir, Path log, UsageMeter meter) {
        this.start = start;
        this.host = host;
        this.claim = claim;
        this.process = process;
        this.startedAt = startedAt;
        this.checkpointDir = checkpointDir;
        this.log = log;
        this.meter = meter;
    }

    String allocationId() {
        return start.allocationId();
    }

    RunningAllocation view() {
        return new RunningAllocation(start.allocationId(), start.jobId(), start.tenant(), host.host().nodeId(),
                claim.gpuIndices(), claim.migInstanceUuid(), claim.sku(), claim.units(), startedAt, null,
                meter.reportedUntil());
    }
}
