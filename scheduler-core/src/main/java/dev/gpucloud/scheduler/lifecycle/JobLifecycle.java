package dev.gpucloud.scheduler.lifecycle;

import dev.gpucloud.contracts.events.JobState;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The job state machine: which moves are legal. An involuntary stop (host loss, spot interruption,
 * preemption) takes a job back to PENDING to resume from its latest checkpoint; final states never
 * change. A job submitted to run after others starts in WAITING_FOR_DEPENDENCIES.
 */
public final class JobLifecycle {

    private static final Map<JobState, Set<JobState>> NEXT = new EnumMap<>(JobState.class);

    static {
        // waiting for the jobs it runs after: queued once they ended as it asks, cancelled when one did not
        NEXT.put(JobState.WAITING_FOR_DEPENDENCIES, EnumSet.of(JobState.PENDING, JobState.CANCELLED,
                JobState.FAILED));
        NEXT.put(JobState.PENDING, EnumSet.of(JobState.SCHEDULED, JobState.CANCELLED, JobState.FAILED));
        NEXT.put(JobState.SCHEDULED, EnumSet.of(JobState.RUNNING, JobState.PENDING, JobState.CANCELLED,
                JobState.FAILED, JobState.SUCCEEDED));
        NEXT.put(JobState.RUNNING, EnumSet.of(JobState.CHECKPOINTING, JobState.SUCCEEDED, JobState.FAILED,
                JobState.CANCELLED, JobState.PENDING));
        NEXT.put(JobState.CHECKPOINTING, EnumSet.of(JobState.RUNNING, JobState.SUCCEEDED, JobState.FAILED,
                JobState.CANCELLED, JobState.PENDING));
        NEXT.put(JobState.SUCCEEDED, EnumSet.noneOf(JobState.class));
        NEXT.put(JobState.FAILED, EnumSet.noneOf(JobState.class));
        NEXT.put(JobState.CANCELLED, EnumSet.noneOf(JobState.class));
    }

    private JobLifecycle() {
    }

    public static boolean canMove(JobState from, JobState to) {
        return NEXT.get(from).contains(to);
    }

    /** Returns {@code to}, or throws naming the illegal move. */
    public static JobState move(String jobId, JobState from, JobState to) {
        if (!canMove(from, to)) {
            throw new IllegalStateException("job " + jobId + " cannot move from " + from + " to " + to);
        }
        return to;
    }
}
