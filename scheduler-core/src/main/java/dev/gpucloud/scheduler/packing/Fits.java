package dev.gpucloud.scheduler.packing;

/** Whether a task fits a node as it is now: GPU model, CPU, memory and GPUs. */
public final class Fits {

    private Fits() {
    }

    public static boolean fits(NodeView node, TaskShape task) {
        if (task.cpuMilli() > node.cpuFreeMilli() || task.memoryMib() > node.memoryFreeMib()) {
            return false;
        }
        if (task.numGpu() == 0) {
            return true;
        }
        if (task.gpuModel() != null && !task.gpuModel().equals(node.gpuModel())) {
            return false;
        }
        return gpusFit(node, task);
    }

    /** The GPU part only: one GPU with enough free milli, or enough wholly free GPUs. */
    static boolean gpusFit(NodeView node, TaskShape task) {
        if (task.numGpu() == 0) {
            return true;
        }
        if (task.numGpu() == 1) {
            for (int g = 0; g < node.gpuCount(); g++) {
                if (node.gpuFree(g) >= task.gpuMilli()) {
                    return true;
                }
            }
            return false;
        }
        return node.wholeFreeGpus() >= task.numGpu();
    }
}
