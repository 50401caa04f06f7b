package dev.gpucloud.scheduler.sim.trace;

/**
 * One pod of Alibaba's openb pod list. {@code numGpu} 0: CPU only ({@code gpuMilli} 0); 1: a share
 * of one GPU of {@code gpuMilli} (1..1000); k > 1: k whole GPUs ({@code gpuMilli} 1000) on one host.
 */
public record OpenbPod(String name, int cpuMilli, long memoryMib, int numGpu, int gpuMilli) {

    public static final int WHOLE_GPU_MILLI = 1000;

    public OpenbPod {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("an openb pod needs its name");
        }
        if (cpuMilli < 0 || memoryMib < 0 || numGpu < 0 || gpuMilli < 0 || gpuMilli > WHOLE_GPU_MILLI) {
            throw new IllegalArgumentException("pod " + name + ": resources out of range");
        }
    }

    /** GPU milli the pod asks for in all: numGpu x gpuMilli. */
    public long totalGpuMilli() {
        return (long) numGpu * gpuMilli;
    }

    /** Whether the pod shares one GPU with others (numGpu 1, gpuMilli below 1000). */
    public boolean isShare() {
        return numGpu == 1 && gpuMilli < WHOLE_GPU_MILLI;
    }
}
