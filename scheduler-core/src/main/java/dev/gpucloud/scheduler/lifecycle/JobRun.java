package dev.gpucloud.scheduler.lifecycle;

import dev.gpucloud.contracts.events.JobState;

/**
 * The life of one job as a pure state machine: PENDING, SCHEDULED, RUNNING, CHECKPOINTING and the
 * final SUCCEEDED, FAILED, CANCELLED. An involuntary stop (spot interruption, preemption, host loss)
 * goes back to PENDING to resume from the latest checkpoint; a failed exit is retried within the
 * {@link RetryPolicy}. Every method returns the {@link Transition} to publish; each stop records the
 * work lost since the last checkpoint (or since the run started, if it saved none). Times are epoch
 * milliseconds.
 */
public final class JobRun {

    private final String jobId;
    private final int gpuMilli;
    private final RetryPolicy retry;
    private JobState state = JobState.PENDING;
    private int attempt;
    private int failures;
    private int interruptions;
    private String resumeFrom;
    private long lastCheckpointMillis = Long.MIN_VALUE;
    private long runningSinceMillis = Long.MIN_VALUE;
    private long lostWorkSeconds;
    private long lostGpuSeconds;
    /** GPU-seconds its ended attempts ran (time run x GPUs): the service least-attained-service ranks by. */
    private long attainedGpuSeconds;
    /** When it last went back in line (Long.MIN_VALUE: never; it waits since its submission). */
    private long requeuedAtMillis = Long.MIN_VALUE;
    /** Milliseconds its ended attempts ran (from all workers started to the attempt's end): its time limit's use. */
    private long ranMillis;

    /** A new job; {@code gpuMilli} is what all its workers hold together (1000 per whole GPU). */
    public JobRun(String jobId, int gpuMilli, RetryPolicy retry) {
        this.jobId = jobId;
        this.gpuMilli = gpuMilli;
        this.retry = retry;
    }

    /** A job restored from storage. */
    public static JobRun restore(String jobId, int gpuMilli, RetryPolicy retry, JobState state, int attempt,
            int failures, int interruptions, String resumeFrom, long lastCheckpointMillis, long runningSinceMillis,
            long lostWorkSeconds, long lostGpuSeconds) {
        JobRun run = new JobRun(jobId, gpuMilli, retry);
        run.state = state;
        run.attempt = attempt;
        run.failures = failures;
        run.interruptions = interruptions;
        run.resumeFrom = resumeFrom;
        run.lastCheckpointMillis = lastCheckpointMillis;
        run.runningSinceMillis = runningSinceMillis;
        run.lostWorkSeconds = lostWorkSeconds;
        run.lostGpuSeconds = lostGpuSeconds;
        return run;
    }

    /** A job restored from storage, with the service its ended attempts received and when it was last requeued. */
    public static JobRun restore(String jobId, int gpuMilli, RetryPolicy retry, JobState state, int attempt,
            int failures, int interruptions, String resumeFrom, long lastCheckpointMillis, long runningSinceMillis,
            long lostWorkSeconds, long lostGpuSeconds, long attainedGpuSeconds, long requeuedAtMillis) {
        JobRun run = restore(jobId, gpuMilli, retry, state, attempt, failures, interruptions, resumeFrom,
                lastCheckpointMillis, runningSinceMillis, lostWorkSeconds, lostGpuSeconds);
        run.attainedGpuSeconds = attainedGpuSeconds;
        run.requeuedAtMillis = requeuedAtMillis;
        return run;
    }

    /** A job restored from storage, with the running time its ended attempts used ({@link #ranMillisAt}). */
    public static JobRun restore(String jobId, int gpuMilli, RetryPolicy retry, JobState state, int attempt,
            int failures, int interruptions, String resumeFrom, long lastCheckpointMillis, long runningSinceMillis,
            long lostWorkSeconds, long lostGpuSeconds, long attainedGpuSeconds, long requeuedAtMillis,
            long ranMillis) {
        JobRun run = restore(jobId, gpuMilli, retry, state, attempt, failures, interruptions, resumeFrom,
                lastCheckpointMillis, runningSinceMillis, lostWorkSeconds, lostGpuSeconds, attainedGpuSeconds,
                requeuedAtMillis);
        run.ranMillis = ranMillis;
        return run;
    }

    /** The attempt that ran since {@code runningSinceMillis} ends at {@code atMillis}: its service counts. */
    private void endAttempt(long atMillis) {
        if (runningSinceMillis != Long.MIN_VALUE && atMillis > runningSinceMillis) {
            attainedGpuSeconds += (atMillis - runningSinceMillis) / 1000 * gpuMilli / 1000;
            ranMillis += atMillis - runningSinceMillis;
        }
        runningSinceMillis = Long.MIN_VALUE;
    }

    private Transition move(JobState to, String reason, long lostWork) {
        JobState from = state;
        JobLifecycle.move(jobId, from, to);
        state = to;
        long lostGpu = lostWork * gpuMilli / 1000;
        lostWorkSeconds += lostWork;
        lostGpuSeconds += lostGpu;
        return new Transition(jobId, from, to, reason, resumeFrom, lostWork, lostGpu);
    }

    /** The jobs it runs after ended as it asked: it joins the queue (from WAITING_FOR_DEPENDENCIES). */
    public Transition dependenciesMet(String reason) {
        return move(JobState.PENDING, reason, 0);
    }

    /** Placed on hosts: a new attempt. */
    public Transition scheduled(String reason) {
        attempt++;
        return move(JobState.SCHEDULED, reason, 0);
    }

    /** Every worker started. */
    public Transition started(long atMillis) {
        runningSinceMillis = atMillis;
        return move(JobState.RUNNING, "all workers started", 0);
    }

    /** The scheduler asked the job to checkpoint (before a preemption or a spot reclaim). */
    public Transition checkpointRequested(String reason) {
        return move(JobState.CHECKPOINTING, reason, 0);
    }

    /** The workload saved a checkpoint; a requested checkpoint returns the job to RUNNING. */
    public Transition checkpointSaved(String path, long atMillis) {
        resumeFrom = path;
        lastCheckpointMillis = Math.max(lastCheckpointMillis, atMillis);
        if (state == JobState.CHECKPOINTING) {
            return move(JobState.RUNNING, "checkpoint saved at " + path, 0);
        }
        return new Transition(jobId, state, state, "checkpoint saved at " + path, resumeFrom, 0, 0);
    }

    /** Seconds of work that a stop at {@code atMillis} loses. */
    public long lostWorkAt(long atMillis) {
        if (state != JobState.RUNNING && state != JobState.CHECKPOINTING) {
            return 0;
        }
        long since = Math.max(runningSinceMillis, lastCheckpointMillis);
        return since == Long.MIN_VALUE ? 0 : Math.max(0, (atMillis - since) / 1000);
    }

    /**
     * An involuntary stop (spot interruption, preemption, host lost): back to the queue, to resume
     * from the latest checkpoint. A job that never started simply goes back.
     */
    public Transition interrupted(String reason, long atMillis) {
        long lost = lostWorkAt(atMillis);
        interruptions++;
        endAttempt(atMillis);
        requeuedAtMillis = atMillis;
        return move(JobState.PENDING, reason, lost);
    }

    /** The job's process exited (for a gang: the decisive worker's exit). */
    public Transition exited(int exitCode, long atMillis) {
        if (exitCode == 0) {
            return move(JobState.SUCCEEDED, "exited 0", 0);
        }
        long lost = lostWorkAt(atMillis);
        endAttempt(atMillis);
        if (retry.retries(exitCode, failures)) {
            failures++;
            requeuedAtMillis = atMillis;
            return move(JobState.PENDING, "exited " + exitCode + ", retry " + failures + " of " + retry.maxRetries(),
                    lost);
        }
        failures++;
        String why = retry.neverRetry().contains(exitCode) ? "exited " + exitCode + " (not retried)"
                : "exited " + exitCode + " after " + (failures - 1) + " retries";
        return move(JobState.FAILED, why, lost);
    }

    public Transition cancelled(String reason, long atMillis) {
        return move(JobState.CANCELLED, reason, lostWorkAt(atMillis));
    }

    public Transition failed(String reason, long atMillis) {
        return move(JobState.FAILED, reason, lostWorkAt(atMillis));
    }

    public String jobId() {
        return jobId;
    }

    public JobState state() {
        return state;
    }

    public int attempt() {
        return attempt;
    }

    public int failures() {
        return failures;
    }

    public int interruptions() {
        return interruptions;
    }

    public String resumeFrom() {
        return resumeFrom;
    }

    public long lastCheckpointMillis() {
        return lastCheckpointMillis;
    }

    public long runningSinceMillis() {
        return runningSinceMillis;
    }

    public long lostWorkSeconds() {
        return lostWorkSeconds;
    }

    public long lostGpuSeconds() {
        return lostGpuSeconds;
    }

    /** GPU-seconds its ended attempts ran. */
    public long attainedGpuSeconds() {
        return attainedGpuSeconds;
    }

    /** Milliseconds its ended attempts ran, as stored; {@link #ranMillisAt} adds the running attempt. */
    public long ranMillis() {
        return ranMillis;
    }

    /**
     * The running time it has used by {@code atMillis}, summed over its attempts: each counts from when all its
     * workers started until it ended; the running (or checkpointing) attempt counts until {@code atMillis}. Time
     * queued or placed but not started never counts.
     */
    public long ranMillisAt(long atMillis) {
        boolean runs = state == JobState.RUNNING || state == JobState.CHECKPOINTING;
        return ranMillis + (runs && runningSinceMillis != Long.MIN_VALUE ? Math.max(0, atMillis - runningSinceMillis)
                : 0);
    }

    /** When it last went back in line, Long.MIN_VALUE when never. */
    public long requeuedAtMillis() {
        return requeuedAtMillis;
    }

    public int gpuMilli() {
        return gpuMilli;
    }
}
