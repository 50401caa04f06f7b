package dev.gpucloud.scheduler.packing;

import java.util.Arrays;

/**
 * What is free on one node now: milli-GPU free on each of its GPUs (index = GPU index), CPU milli-cores
 * and memory MiB free, its GPU model (null when it has none) and its CPU capacity (for BestFit's
 * normalisation). The array is copied in and out; equality compares contents.
 */
public record NodeView(String id, int[] gpuFreeMilli, long cpuFreeMilli, long memoryFreeMib, String gpuModel,
        long cpuCapacityMilli) {

    public static final int WHOLE = 1000;

    public NodeView {
        if (gpuFreeMilli == null) {
            throw new IllegalArgumentException("gpuFreeMilli must not be null (empty for a node without GPUs)");
        }
        gpuFreeMilli = gpuFreeMilli.clone();
        for (int i = 0; i < gpuFreeMilli.length; i++) {
            if (gpuFreeMilli[i] < 0 || gpuFreeMilli[i] > WHOLE) {
                throw new IllegalArgumentException("node " + id + ": gpuFreeMilli[" + i + "] must be within 0..1000, was "
                        + gpuFreeMilli[i]);
            }
        }
        if (cpuFreeMilli < 0 || memoryFreeMib < 0) {
            throw new IllegalArgumentException("node " + id + ": free CPU and memory must be >= 0");
        }
        if (cpuCapacityMilli < cpuFreeMilli) {
            cpuCapacityMilli = cpuFreeMilli;
        }
    }

    /** A node with nothing in use: {@code gpus} whole GPUs and the given CPU and memory. */
    public static NodeView empty(String id, int gpus, long cpuMilli, long memoryMib, String gpuModel) {
        int[] free = new int[gpus];
        Arrays.fill(free, WHOLE);
        return new NodeView(id, free, cpuMilli, memoryMib, gpuModel, cpuMilli);
    }

    @Override
    public int[] gpuFreeMilli() {
        return gpuFreeMilli.clone();
    }

    /** Free milli of GPU {@code i}, without copying the array. */
    public int gpuFree(int i) {
        return gpuFreeMilli[i];
    }

    public int gpuCount() {
        return gpuFreeMilli.length;
    }

    /** Free milli over all GPUs. */
    public int totalGpuFree() {
        int sum = 0;
        for (int f : gpuFreeMilli) {
            sum += f;
        }
        return sum;
    }

    /** GPUs with all 1000 milli free. */
    public int wholeFreeGpus() {
        int n = 0;
        for (int f : gpuFreeMilli) {
            if (f == WHOLE) {
                n++;
            }
        }
        return n;
    }

    /** This node after {@code task} takes {@code gpus}. */
    public NodeView after(TaskShape task, GpuChoice gpus) {
        int[] free = gpuFreeMilli.clone();
        for (int g : gpus.gpuIndexes()) {
            free[g] -= task.gpuMilli();
            if (free[g] < 0) {
                throw new IllegalArgumentException("node " + id + ": GPU " + g + " has " + gpuFreeMilli[g]
                        + " milli free, the task needs " + task.gpuMilli());
            }
        }
        return new NodeView(id, free, cpuFreeMilli - task.cpuMilli(), memoryFreeMib - task.memoryMib(), gpuModel,
                cpuCapacityMilli);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NodeView v && Arrays.equals(gpuFreeMilli, v.gpuFreeMilli) && cpuFreeMilli == v.cpuFreeMilli
                && memoryFreeMib == v.memoryFreeMib && java.util.Objects.equals(id, v.id)
                && java.util.Objects.equals(gpuModel, v.gpuModel) && cpuCapacityMilli == v.cpuCapacityMilli;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(id, Arrays.hashCode(gpuFreeMilli), cpuFreeMilli, memoryFreeMib, gpuModel);
    }

    @Override
    public String toString() {
        return "NodeView[" + id + " gpus=" + Arrays.toString(gpuFreeMilli) + " cpu=" + cpuFreeMilli + " mem="
                + memoryFreeMib + " model=" + gpuModel + "]";
    }
}
