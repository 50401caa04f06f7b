package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/** A multi-GPU worker that asks for NVLink gets all its GPUs from one NVLink island. */
public final class NvlinkIslandFit implements Plugins.Filter {

    public static final String NAME = "NvlinkIsland";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (!r.nvlink() || r.kind() != PlacementRequest.Kind.WHOLE) {
            return Status.SUCCESS;
        }
        return largestIsland(r, node) >= r.gpusPerWorker() ? Status.SUCCESS
                : Status.unschedulable(NAME, "no NVLink island with " + r.gpusPerWorker() + " free GPUs");
    }

    /** The most free allowed GPUs on one island (islands numbered from 0; -1 means none). */
    static int largestIsland(PlacementRequest r, NodeState node) {
        int[] counts = new int[Math.max(1, node.gpuCount())];
        int best = 0;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (g.island() >= 0 && g.island() < counts.length && g.isWholeFree() && Gpus.allowed(r, g)) {
                best = Math.max(best, ++counts[g.island()]);
            }
        }
        return best;
    }
}
