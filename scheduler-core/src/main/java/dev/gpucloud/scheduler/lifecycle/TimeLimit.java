package dev.gpucloud.scheduler.lifecycle;

import dev.gpucloud.contracts.events.JobState;

/**
 * A job's time limit: the most running time, summed over all its attempts, it may use ({@link JobRun#ranMillisAt}).
 * At the limit it is asked to checkpoint (if it checkpoints) and stopped, and ends FAILED saying so; it is never
 * retried nor requeued, since every later attempt would be over the limit too. Limit 0 means none.
 */
public final class TimeLimit {

    private TimeLimit() {
    }

    /**
     * When {@code run} reaches a limit of {@code limitSeconds} if it keeps running: Long.MAX_VALUE when it has no
     * limit or is not running (queued time does not count); Long.MIN_VALUE for a placed job not started yet whose
     * earlier attempts used the whole limit already (it is stopped at once).
     */
    public static long reachedAtMillis(JobRun run, long limitSeconds) {
        if (limitSeconds <= 0) {
            return Long.MAX_VALUE;
        }
        long left = limitSeconds * 1000 - run.ranMillis();
        JobState state = run.state();
        if ((state == JobState.RUNNING || state == JobState.CHECKPOINTING) && run.runningSinceMillis() != Long.MIN_VALUE) {
            return run.runningSinceMillis() + left;
        }
        if (state == JobState.SCHEDULED && left <= 0) {
            return Long.MIN_VALUE;
        }
        return Long.MAX_VALUE;
    }

    /** What its owner reads when the limit is reached: "time limit of 2h reached after 2h0m of running". */
    public static String reason(long limitSeconds, long ranMillis) {
        return "time limit of " + limit(limitSeconds) + " reached after " + ran(ranMillis / 1000) + " of running";
    }

    /** A limit as its owner wrote it, in its largest units: 2h, 1h30m, 90s is 1m30s, 3s. */
    static String limit(long seconds) {
        long h = seconds / 3600;
        long m = seconds % 3600 / 60;
        long s = seconds % 60;
        StringBuilder b = new StringBuilder();
        if (h > 0) {
            b.append(h).append('h');
        }
        if (m > 0) {
            b.append(m).append('m');
        }
        if (s > 0 || b.isEmpty()) {
            b.append(s).append('s');
        }
        return b.toString();
    }

    /** A running time to the precision that matters: 2h0m, 1m5s, 3s. */
    static String ran(long seconds) {
        if (seconds >= 3600) {
            return seconds / 3600 + "h" + seconds % 3600 / 60 + "m";
        }
        if (seconds >= 60) {
            return seconds / 60 + "m" + seconds % 60 + "s";
        }
        return seconds + "s";
    }
}
