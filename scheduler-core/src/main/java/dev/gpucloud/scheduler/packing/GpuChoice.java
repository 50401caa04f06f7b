package dev.gpucloud.scheduler.packing;

import java.util.Arrays;

/** The GPUs of one node a task takes, by index; empty for a CPU-only task. Copied in and out. */
public record GpuChoice(int[] gpuIndexes) {

    public static final GpuChoice NONE = new GpuChoice(new int[0]);

    public GpuChoice {
        gpuIndexes = gpuIndexes.clone();
    }

    public static GpuChoice of(int... indexes) {
        return new GpuChoice(indexes);
    }

    @Override
    public int[] gpuIndexes() {
        return gpuIndexes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GpuChoice c && Arrays.equals(gpuIndexes, c.gpuIndexes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gpuIndexes);
    }

    @Override
    public String toString() {
        return Arrays.toString(gpuIndexes);
    }
}
