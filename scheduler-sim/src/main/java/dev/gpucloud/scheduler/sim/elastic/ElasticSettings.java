package dev.gpucloud.scheduler.sim.elastic;

import java.time.Duration;
import java.util.Objects;

/**
 * One elastic run's settings. The autoscaler decides every {@code scanInterval}, releases hosts idle for
 * {@code idleTimeout} and drains hosts below {@code lowUtilization} (0 turns draining off); hosts boot for
 * {@code bootDelay}. A job checkpoints every {@code checkpointInterval} of progress, so a reclaim loses at most that
 * much work, and every resume costs {@code resumeOverhead}; a {@code nonCheckpointable} fraction of the jobs (drawn
 * from {@code seed}) cannot survive a reclaim and runs on demand. Spot hosts are reclaimed at
 * {@code interruptionsPerHour} per host-hour; each zone sells {@code spotGpusPerZone} spot GPUs. The time series
 * takes a row every {@code sampleEvery}.
 */
public record ElasticSettings(Duration scanInterval, Duration bootDelay, Duration idleTimeout, double lowUtilization,
        Duration checkpointInterval, Duration resumeOverhead, double nonCheckpointable, long seed,
        double interruptionsPerHour, int spotGpusPerZone, Duration sampleEvery) {

    public ElasticSettings {
        positive(scanInterval, "scan interval");
        positive(idleTimeout, "idle timeout");
        positive(checkpointInterval, "checkpoint interval");
        positive(sampleEvery, "sample interval");
        Objects.requireNonNull(bootDelay, "boot delay");
        Objects.requireNonNull(resumeOverhead, "resume overhead");
        if (bootDelay.isNegative() || resumeOverhead.isNegative()) {
            throw new IllegalArgumentException("boot delay and resume overhead must be >= 0");
        }
        if (!(lowUtilization >= 0 && lowUtilization <= 1)) {
            throw new IllegalArgumentException("low utilization must be within 0..1, got " + lowUtilization);
        }
        if (!(nonCheckpointable >= 0 && nonCheckpointable <= 1)) {
            throw new IllegalArgumentException("non-checkpointable fraction must be within 0..1, got " + nonCheckpointable);
        }
        if (!(interruptionsPerHour >= 0) || Double.isInfinite(interruptionsPerHour)) {
            throw new IllegalArgumentException("interruption rate must be >= 0, got " + interruptionsPerHour);
        }
        if (spotGpusPerZone < 0) {
            throw new IllegalArgumentException("spot GPUs per zone must be >= 0, got " + spotGpusPerZone);
        }
    }

    /**
     * A scan every 30 s, 60 s to boot, 10 min idle timeout, draining below 0.70 (the core's defaults), a checkpoint
     * every 30 min, 30 s to resume, 10 % of jobs not checkpointable, 0.02 reclaims per spot host-hour, 512 spot GPUs
     * per zone, a sample every 10 min.
     */
    public static ElasticSettings defaults() {
        return new ElasticSettings(Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofMinutes(10), 0.70,
                Duration.ofMinutes(30), Duration.ofSeconds(30), 0.10, 42, 0.02, 512, Duration.ofMinutes(10));
    }

    public ElasticSettings withBootDelay(Duration d) {
        return new ElasticSettings(scanInterval, d, idleTimeout, lowUtilization, checkpointInterval, resumeOverhead,
                nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withIdleTimeout(Duration d) {
        return new ElasticSettings(scanInterval, bootDelay, d, lowUtilization, checkpointInterval, resumeOverhead,
                nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withScanInterval(Duration d) {
        return new ElasticSettings(d, bootDelay, idleTimeout, lowUtilization, checkpointInterval, resumeOverhead,
                nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withInterruptions(double perHour) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, lowUtilization, checkpointInterval,
                resumeOverhead, nonCheckpointable, seed, perHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withCheckpoints(Duration interval, Duration resume) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, lowUtilization, interval, resume,
                nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withNonCheckpointable(double fraction) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, lowUtilization, checkpointInterval,
                resumeOverhead, fraction, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withLowUtilization(double threshold) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, threshold, checkpointInterval,
                resumeOverhead, nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withSeed(long s) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, lowUtilization, checkpointInterval,
                resumeOverhead, nonCheckpointable, s, interruptionsPerHour, spotGpusPerZone, sampleEvery);
    }

    public ElasticSettings withSampleEvery(Duration d) {
        return new ElasticSettings(scanInterval, bootDelay, idleTimeout, lowUtilization, checkpointInterval,
                resumeOverhead, nonCheckpointable, seed, interruptionsPerHour, spotGpusPerZone, d);
    }

    private static void positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }
}
