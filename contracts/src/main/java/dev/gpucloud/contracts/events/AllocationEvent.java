package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
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
        Check.text(allocationId, Limits.ID, "allocationId");
        Check.text(jobId, Limits.ID, "jobId");
        Check.text(nodeId, Limits.ID, "nodeId");
        Check.optionalText(checkpointPath, Limits.CHECKPOINT_LOCATION, "checkpointPath");
        Check.optionalText(detail, Limits.DETAIL, "detail");
        Check.optionalText(migInstanceUuid, Limits.LABEL_TEXT, "migInstanceUuid");
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
