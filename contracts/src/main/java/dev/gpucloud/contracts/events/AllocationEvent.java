package dev.gpucloud.contracts.events;

import java.time.Instant;

/**
 * What a host's agent saw happen to an allocation, on {@code allocation.events} keyed by jobId so
 * that all of one job's events stay in order. EXITED carries the exit code; CHECKPOINT_SAVED the
 * checkpoint's path.
 */
public record AllocationEvent(
        String allocationId,
        String jobId,
        String nodeId,
        AllocationEventType type,
        Instant occurredAt,
        Integer exitCode,
        String checkpointPath,
        String detail) {

    public AllocationEvent {
        Require.text(allocationId, "allocationId");
        Require.text(jobId, "jobId");
        Require.text(nodeId, "nodeId");
        Require.present(type, "type");
        Require.present(occurredAt, "occurredAt");
        if (type == AllocationEventType.EXITED) {
            Require.present(exitCode, "exitCode");
        }
        if (type == AllocationEventType.CHECKPOINT_SAVED) {
            Require.text(checkpointPath, "checkpointPath");
        }
    }
}
