package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;
import java.util.List;

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
        String migInstanceUuid,
        List<String> heldBy,
        Instant startBy) {

    /** At most this many holders are named in {@code heldBy}. */
    public static final int MAX_HELD_BY = 64;

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
        heldBy = heldBy == null ? List.of() : List.copyOf(heldBy);
        if (heldBy.size() > MAX_HELD_BY) {
            throw new IllegalArgumentException("heldBy names " + heldBy.size() + " allocations; at most " + MAX_HELD_BY);
        }
        for (String holder : heldBy) {
            Check.text(holder, Limits.ID, "heldBy");
            Require.text(holder, "heldBy");
        }
        if (!heldBy.isEmpty() && type != AllocationEventType.LOST) {
            throw new IllegalArgumentException("heldBy is only for LOST (a start refused because its GPUs are busy),"
                    + " not " + type);
        }
        if (startBy != null && type != AllocationEventType.LOST) {
            throw new IllegalArgumentException("startBy is only for LOST (a START that came after its start-by time),"
                    + " not " + type);
        }
    }

    /** An event that names no holder of its GPUs and no missed start-by time. */
    public AllocationEvent(String allocationId, String jobId, String nodeId, AllocationEventType type,
            Instant occurredAt, Integer exitCode, String checkpointPath, String detail, String migInstanceUuid,
            List<String> heldBy) {
        this(allocationId, jobId, nodeId, type, occurredAt, exitCode, checkpointPath, detail, migInstanceUuid, heldBy,
                null);
    }

    /** An event that names no holder of its GPUs. */
    public AllocationEvent(String allocationId, String jobId, String nodeId, AllocationEventType type,
            Instant occurredAt, Integer exitCode, String checkpointPath, String detail, String migInstanceUuid) {
        this(allocationId, jobId, nodeId, type, occurredAt, exitCode, checkpointPath, detail, migInstanceUuid, null,
                null);
    }

    /**
     * A START its host refused because other allocations hold its GPUs ({@code heldBy}): LOST, for the platform
     * placed it where it could not run, not the job's doing. A GPU shared by many fractions can have more holders
     * than an event names: the first {@value #MAX_HELD_BY} are named (the host's reports tell the rest), and the
     * detail, which lists them all, is cut to fit, so the answer can always be sent.
     */
    public static AllocationEvent busy(String allocationId, String jobId, String nodeId, Instant occurredAt,
            String detail, List<String> heldBy) {
        List<String> named = heldBy.size() > MAX_HELD_BY ? heldBy.subList(0, MAX_HELD_BY) : heldBy;
        return new AllocationEvent(allocationId, jobId, nodeId, AllocationEventType.LOST, occurredAt, null, null,
                fitted(detail), null, named, null);
    }

    /** {@code detail} cut to the limit of free text, never inside a surrogate pair. */
    static String fitted(String detail) {
        int max = (int) Limits.DETAIL.max();
        if (detail == null || detail.length() <= max) {
            return detail;
        }
        int cut = max - 3;
        if (Character.isHighSurrogate(detail.charAt(cut - 1))) {
            cut--;
        }
        return detail.substring(0, cut) + "...";
    }

    /**
     * A START that came after its start-by time ({@code startBy}), which its host therefore did not start: LOST. A
     * scheduler that has not counted the allocation lost sends the START again; one that has ignores this.
     */
    public static AllocationEvent late(String allocationId, String jobId, String nodeId, Instant occurredAt,
            String detail, Instant startBy) {
        return new AllocationEvent(allocationId, jobId, nodeId, AllocationEventType.LOST, occurredAt, null, null,
                detail, null, null, java.util.Objects.requireNonNull(startBy, "startBy"));
    }

    /** An event that names no MIG instance. */
    public AllocationEvent(String allocationId, String jobId, String nodeId, AllocationEventType type,
            Instant occurredAt, Integer exitCode, String checkpointPath, String detail) {
        this(allocationId, jobId, nodeId, type, occurredAt, exitCode, checkpointPath, detail, null);
    }
}
