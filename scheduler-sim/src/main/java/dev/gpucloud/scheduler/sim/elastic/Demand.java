package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.Arrays;
import java.util.List;

/**
 * The GPUs a job list asks for over time if every job ran from its submission for its duration: the peak and the
 * mean of that curve (GPU-seconds over the span from the first submission to the last such finish), which size the
 * static baselines.
 */
public record Demand(int peakGpus, double meanGpus, int largestJobGpus) {

    public static Demand of(List<TraceJob> jobs) {
        if (jobs.isEmpty()) {
            return new Demand(0, 0, 0);
        }
        long[][] ev = new long[jobs.size() * 2][];
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        double gpuMillis = 0;
        int largest = 0;
        int k = 0;
        for (TraceJob j : jobs) {
            long end = j.submitMillis() + j.durationMillis();
            ev[k++] = new long[] {j.submitMillis(), j.gpus()};
            ev[k++] = new long[] {end, -j.gpus()};
            first = Math.min(first, j.submitMillis());
            last = Math.max(last, end);
            gpuMillis += (double) j.durationMillis() * j.gpus();
            largest = Math.max(largest, j.gpus());
        }
        // ends before starts at the same instant: a job that ends as another starts frees its GPUs first
        Arrays.sort(ev, (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        long cur = 0;
        long peak = 0;
        for (long[] e : ev) {
            cur += e[1];
            peak = Math.max(peak, cur);
        }
        return new Demand((int) peak, gpuMillis / Math.max(1, last - first), largest);
    }

    /** Hosts of {@code gpusPerHost} for {@code gpus} GPUs, never fewer than the largest job needs. */
    public int hostsFor(double gpus, int gpusPerHost) {
        int need = (int) Math.ceil(gpus / gpusPerHost - 1e-9);
        int largestNeeds = (int) Math.ceil((double) largestJobGpus / gpusPerHost);
        return Math.max(Math.max(1, need), largestNeeds);
    }
}
