package dev.gpucloud.contracts.events;

import java.time.Instant;

/**
 * What a host's agent saw happen to an allocation, on {@code allocation.events} keyed by jobId so
 * that all of one job's events stay in order. EXITED carries the exit code; CHECKPOINT_SAVED the
 * checkpoint's path. STARTED of a MIG allocation carries the UUID of the MIG instance the agent
 * ran it on ({@code migInstanceUuid}), which may differ from the slot the START named.
 */
public record AllocationEvent(
        String allocationId,
        String jobId,
        String nodeId,
        AllocationEventType type,
        Instant occurredAt,
        Integer exitCode,
        String checkpointPath,
        String detail,
        String migInstanceUuid) {

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
        if (migInstanceUuid != null) {
            Require.text(migInstanceUuid, "migInstanceUuid");
        }
    }

    /** An event that names no MIG instance. */
    public AllocationEvent(String allocationId, String jobId, String nodeId, AllocationEventType type,
            Instant occurredAt, Integer exitCode, String checkpointPath, String detail) {
        this(allocationId, jobId, nodeId, type, occurredAt, exitCode, checkpointPath, detail, null);
    }
}
