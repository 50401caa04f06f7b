package dev.gpucloud.scheduler.sim.trace;

/** One host of Alibaba's openb cluster: CPU in milli-cores, memory in MiB, whole GPUs of one model. */
public record OpenbNode(String name, int cpuMilli, long memoryMib, int gpus, String model) {
    public OpenbNode {
        if (name == null || name.isBlank() || model == null || model.isBlank()) {
            throw new IllegalArgumentException("an openb node needs its name and GPU model");
        }
        if (cpuMilli < 0 || memoryMib < 0 || gpus < 0) {
            throw new IllegalArgumentException("node " + name + ": CPU, memory and GPUs must be >= 0");
        }
    }
}
