package dev.gpucloud.scheduler.packing;

/**
 * What a task asks for: {@code numGpu} 0 (CPU only, {@code gpuMilli} 0), 1 (a share of one GPU,
 * {@code gpuMilli} 1..1000) or k &gt; 1 whole GPUs on one node ({@code gpuMilli} 1000); CPU
 * milli-cores and memory MiB; a GPU model, or null for any.
 */
public record TaskShape(int numGpu, int gpuMilli, long cpuMilli, long memoryMib, String gpuModel) {

    public TaskShape {
        if (numGpu < 0) {
            throw new IllegalArgumentException("numGpu must be >= 0, was " + numGpu);
        }
        if (numGpu == 0 && gpuMilli != 0) {
            throw new IllegalArgumentException("gpuMilli must be 0 for a CPU-only task, was " + gpuMilli);
        }
        if (numGpu == 1 && (gpuMilli < 1 || gpuMilli > NodeView.WHOLE)) {
            throw new IllegalArgumentException("gpuMilli must be within 1..1000 for a one-GPU task, was " + gpuMilli);
        }
        if (numGpu > 1 && gpuMilli != NodeView.WHOLE) {
            throw new IllegalArgumentException("gpuMilli must be 1000 for a task of " + numGpu + " GPUs, was " + gpuMilli);
        }
        if (cpuMilli < 0 || memoryMib < 0) {
            throw new IllegalArgumentException("cpuMilli and memoryMib must be >= 0");
        }
        gpuModel = gpuModel == null || gpuModel.isBlank() ? null : gpuModel;
    }

    /** A task of any GPU model. */
    public static TaskShape of(int numGpu, int gpuMilli, long cpuMilli, long memoryMib) {
        return new TaskShape(numGpu, gpuMilli, cpuMilli, memoryMib, null);
    }

    /** GPU milli asked for in all. */
    public long totalGpuMilli() {
        return (long) numGpu * gpuMilli;
    }

    /** The least free milli a GPU must have to count as usable by this task: min(per-GPU milli, 1000). */
    public int perGpuMilli() {
        return numGpu == 0 ? 0 : gpuMilli;
    }
}
