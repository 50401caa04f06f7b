package dev.gpucloud.scheduler.sim.engine;

import java.util.Arrays;
import java.util.List;

/**
 * The outcome of one run: every job's times, the makespan, utilization over time (allocated
 * GPU-milliseconds per bucket), costs in micro-USD and counters. Derived figures are methods.
 *
 * @param fleetCostMicros what the fleet cost over the makespan at its own prices (spot hosts at spot
 *                        price, not billed while reclaimed and not yet replaced)
 * @param onDemandFleetCostMicros the same hosts over the same makespan, all at on-demand prices
 * @param busyCostMicros  GPU-time actually allocated to jobs, at each host's per-GPU price
 */
public record SimResult(String policy, String cluster, List<SimJob> jobs, long makespanMillis, int totalGpus,
        long bucketMillis, double[] utilizationGpuMillis, double fleetCostMicros, double onDemandFleetCostMicros,
        double busyCostMicros, long spotInterruptions, long events, long decisions, long wallNanos) {

    /** JCTs in seconds, in job order. */
    public double[] jctSeconds() {
        double[] out = new double[jobs.size()];
        for (int i = 0; i < out.length; i++) {
            SimJob j = jobs.get(i);
            out[i] = (j.finishMillis() - j.submitMillis()) / 1000.0;
        }
        return out;
    }

    public double averageJctSeconds() {
        return Arrays.stream(jctSeconds()).average().orElse(0);
    }

    /** The p-quantile by the convention of the Muri figures: sorted[int(n x q)]. */
    public double jctQuantileSeconds(double q) {
        double[] s = jctSeconds();
        if (s.length == 0) {
            return 0;
        }
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) (s.length * q))];
    }

    public double p99JctSeconds() {
        return jctQuantileSeconds(0.99);
    }

    public double makespanSeconds() {
        return makespanMillis / 1000.0;
    }

    /** Mean time from submission to first start, seconds. */
    public double averageQueueingSeconds() {
        return jobs.stream().mapToDouble(j -> (j.firstStartMillis() - j.submitMillis()) / 1000.0).average().orElse(0);
    }

    /** Allocated GPU-time over (GPUs x makespan). */
    public double utilization() {
        double used = 0;
        for (double u : utilizationGpuMillis) {
            used += u;
        }
        return makespanMillis == 0 ? 0 : used / ((double) totalGpus * makespanMillis);
    }

    /** Utilization of each bucket, 0..1. */
    public double[] utilizationSeries() {
        double[] out = new double[utilizationGpuMillis.length];
        for (int i = 0; i < out.length; i++) {
            long width = Math.min(bucketMillis, Math.max(1, makespanMillis - i * bucketMillis));
            out[i] = utilizationGpuMillis[i] / ((double) totalGpus * width);
        }
        return out;
    }

    public long preemptions() {
        return jobs.stream().mapToLong(SimJob::preemptions).sum();
    }

    public double lostGpuHours() {
        return jobs.stream().mapToLong(SimJob::lostGpuMillis).sum() / 3_600_000.0;
    }

    public double overheadGpuHours() {
        return jobs.stream().mapToLong(SimJob::overheadGpuMillis).sum() / 3_600_000.0;
    }

    /** Jobs simulated per second of wall time. */
    public double jobsPerWallSecond() {
        return wallNanos == 0 ? 0 : jobs.size() / (wallNanos / 1e9);
    }
}
