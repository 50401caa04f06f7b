package dev.gpucloud.scheduler.state;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.lifecycle.GangSettlement;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What happens to a job's workers (its allocations), decided without a database, a broker or a clock: a
 * pass places them, their host reports them started, exited or lost, or reports a START it got too late.
 * Each command takes the allocation's row ({@link AllocationRow}) and changes it; what that means for the
 * job as a whole is {@link JobCommands#settle}'s to decide, over the attempt's rows.
 */
public final class WorkerCommands {

    private WorkerCommands() {
    }

    /** What a STARTED report did. */
    public enum Start {
        /** The allocation ended already (or never was): nothing changes. */
        IGNORED,
        /** It was known to run: nothing changes, but its record is replayed (a standby may have missed it). */
        REPEAT,
        /** It runs now: store it and settle its job. */
        STARTED
    }

    /** Its host started the worker at {@code at}, on MIG instance {@code migInstanceUuid} (or null). */
    public static Start started(AllocationRow a, Instant at, String migInstanceUuid) {
        if (!a.isActive()) {
            return Start.IGNORED;
        }
        if (a.phase() == Phase.RUNNING) {
            return Start.REPEAT;
        }
        a.started(at, migInstanceUuid);
        return Start.STARTED;
    }

    /**
     * The worker exited with {@code exitCode} (null: its agent could not say) or was lost ({@code lost}) at
     * {@code at}. Returns whether it ended now; a repeat, or news of one that ended already, changes nothing.
     */
    public static boolean ended(AllocationRow a, boolean lost, Integer exitCode, Instant at) {
        if (!a.isActive()) {
            return false;
        }
        a.ended(lost ? Phase.LOST : Phase.EXITED, lost ? null : exitCode, at);
        return true;
    }

    /** What to do about a START its host got after its start-by time. */
    public enum Resend {
        /** The allocation moved on (it started, ended, or its job did): nothing. */
        NO,
        /** Its host has been silent so long that a new start-by time would have passed already: liveness decides. */
        TOO_LATE,
        /** Send the START again with the new start-by time: the late command costs the job no attempt. */
        YES
    }

    /**
     * Its host got the START of {@code a} after its start-by time and did not start it. Should the scheduler
     * still hold the allocation (it could not hear the host meanwhile, or the START waited in the broker), the
     * START goes again, to start by {@code newStartByMillis} (null: the host is unknown, no time is set).
     */
    public static Resend startAgain(JobRow job, AllocationRow a, Long newStartByMillis, long nowMillis) {
        if (a.phase() != Phase.STARTING || job.run().attempt() != a.attempt() || !GangSettlement.placed(job.state())) {
            return Resend.NO;
        }
        return newStartByMillis != null && newStartByMillis <= nowMillis ? Resend.TOO_LATE : Resend.YES;
    }

    /**
     * A pass placed the queued job on {@code assignments}: a new attempt starts ({@link JobCommands#placed}), and
     * these are its workers' rows, STARTING, in rank order.
     */
    public static List<AllocationRow> placed(JobRow job, List<Assignment> assignments, boolean backfilled,
            Instant now) {
        if (assignments.isEmpty()) {
            throw new IllegalArgumentException("job " + job.jobId() + " was placed on no allocation");
        }
        JobCommands.placed(job, where(assignments), backfilled);
        List<AllocationRow> rows = new ArrayList<>();
        for (Assignment a : assignments) {
            rows.add(AllocationRow.placed(a, job.run().attempt(), now));
        }
        return rows;
    }

    /** Where a placement put the workers, as its owner reads it: each host once, with what it holds there. */
    public static String where(List<Assignment> assignments) {
        Set<String> parts = new LinkedHashSet<>();
        assignments.forEach(a -> parts.add(a.nodeId() + " " + AllocationRow.describe(a)));
        return String.join(", ", parts);
    }
}
