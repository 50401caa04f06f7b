package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/**
 * Whole-GPU fit: the host has {@code gpusPerWorker} free GPUs of an allowed model with enough
 * memory. The reason says how far it is: "6 of 8 A100-SXM4-40GB free".
 */
public final class GpuFit implements Plugins.Filter, Plugins.PreFilter {

    public static final String NAME = "GpuFit";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status preFilter(CycleState state, PlacementRequest r) {
        if (r.kind() == PlacementRequest.Kind.WHOLE && r.gpusPerWorker() < 1) {
            return Status.unresolvable(NAME, "a worker needs at least one GPU");
        }
        return Status.SUCCESS;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (r.kind() != PlacementRequest.Kind.WHOLE) {
            return Status.SUCCESS;
        }
        int need = r.gpusPerWorker();
        if (!node.mixedModels() && r.models().isEmpty() && r.minGpuMemoryMib() == 0) {
            if (node.wholeFree() >= need) {
                return Status.SUCCESS;
            }
        }
        int models = 0;
        int memory = 0;
        int free = 0;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (!Gpus.modelAllowed(r, g)) {
                continue;
            }
            models++;
            if (g.memoryMib() < r.minGpuMemoryMib()) {
                continue;
            }
            memory++;
            if (g.isWholeFree()) {
                free++;
            }
        }
        if (free >= need) {
            return Status.SUCCESS;
        }
        if (models == 0) {
            return Status.unschedulable(NAME, node.gpuCount() == 0 ? "no GPUs" : "no " + Gpus.models(r) + " GPUs");
        }
        if (memory < need) {
            return Status.unschedulable(NAME, "fewer than " + need + " GPUs with " + r.minGpuMemoryMib() + " MiB");
        }
        return Status.unschedulable(NAME, free + " of " + memory + " " + node.model() + " free, need " + need);
    }
}
