package dev.gpucloud.scheduler.sim.engine;

/**
 * How a simulation runs, all times in virtual milliseconds.
 *
 * @param checkpointMillis     what a preemption by the policy costs in checkpoint time; charged, with
 *                             {@code restoreMillis}, as GPU time without progress when the job resumes
 * @param restoreMillis        time a job spends restoring from its checkpoint after any restart
 *                             (preemption, migration or spot loss); the first start costs nothing
 * @param checkpointIntervalMillis a running job writes a checkpoint after every this much progress (0:
 *                             never); a spot loss rolls back to the last one
 * @param spotInterruptionsPerHostHour Poisson rate of spot interruptions per spot host-hour (0: none)
 * @param spotNoticeMillis     notice between the cloud's interruption warning and the reclaim; the host
 *                             takes no new work in between
 * @param spotReplaceMillis    time until a reclaimed spot host is replaced by a fresh one
 * @param seed                 seeds the spot process (the only randomness of the engine)
 * @param utilizationBucketMillis width of the utilization-over-time buckets
 */
public record SimConfig(long checkpointMillis, long restoreMillis, long checkpointIntervalMillis,
        double spotInterruptionsPerHostHour, long spotNoticeMillis, long spotReplaceMillis, long seed,
        long utilizationBucketMillis) {

    public SimConfig {
        if (checkpointMillis < 0 || restoreMillis < 0 || checkpointIntervalMillis < 0 || spotNoticeMillis < 0
                || spotReplaceMillis < 0) {
            throw new IllegalArgumentException("checkpoint, restore, interval, notice and replace times must be >= 0");
        }
        if (!(spotInterruptionsPerHostHour >= 0) || Double.isInfinite(spotInterruptionsPerHostHour)) {
            throw new IllegalArgumentException("spotInterruptionsPerHostHour must be a finite number >= 0, was "
                    + spotInterruptionsPerHostHour);
        }
        if (utilizationBucketMillis <= 0) {
            throw new IllegalArgumentException("utilizationBucketMillis must be > 0, was " + utilizationBucketMillis);
        }
    }

    /** No overheads, no checkpoints, no spot interruptions, hourly utilization buckets. */
    public static SimConfig defaults() {
        return new SimConfig(0, 0, 0, 0, 0, 0, 42, 3_600_000);
    }

    public SimConfig withOverheads(long checkpoint, long restore) {
        return new SimConfig(checkpoint, restore, checkpointIntervalMillis, spotInterruptionsPerHostHour,
                spotNoticeMillis, spotReplaceMillis, seed, utilizationBucketMillis);
    }

    public SimConfig withCheckpointInterval(long interval) {
        return new SimConfig(checkpointMillis, restoreMillis, interval, spotInterruptionsPerHostHour, spotNoticeMillis,
                spotReplaceMillis, seed, utilizationBucketMillis);
    }

    public SimConfig withSpot(double perHostHour, long notice, long replace) {
        return new SimConfig(checkpointMillis, restoreMillis, checkpointIntervalMillis, perHostHour, notice, replace,
                seed, utilizationBucketMillis);
    }

    public SimConfig withSeed(long s) {
        return new SimConfig(checkpointMillis, restoreMillis, checkpointIntervalMillis, spotInterruptionsPerHostHour,
                spotNoticeMillis, spotReplaceMillis, s, utilizationBucketMillis);
    }

    public SimConfig withUtilizationBucket(long millis) {
        return new SimConfig(checkpointMillis, restoreMillis, checkpointIntervalMillis, spotInterruptionsPerHostHour,
                spotNoticeMillis, spotReplaceMillis, seed, millis);
    }
}
