package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.geometry.GpuAdmission;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/** Fractional fit: one shared (non-MIG) GPU of an allowed model has {@code milliGpu} free. */
public final class FractionFit implements Plugins.Filter, Plugins.PreFilter {

    public static final String NAME = "FractionFit";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status preFilter(CycleState state, PlacementRequest r) {
        if (r.kind() == PlacementRequest.Kind.FRACTION && (r.milliGpu() < 1 || r.milliGpu() > 1000)) {
            return Status.unresolvable(NAME, "a GPU fraction must be 1..1000 milli, was " + r.milliGpu());
        }
        return Status.SUCCESS;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (r.kind() != PlacementRequest.Kind.FRACTION) {
            return Status.SUCCESS;
        }
        int most = -1;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (g.mig() == null && Gpus.allowed(r, g)) {
                most = Math.max(most, g.freeMilli());
                if (GpuAdmission.shareFits(g.mig(), g.usedMilli(), r.milliGpu())) {
                    return Status.SUCCESS;
                }
            }
        }
        return Status.unschedulable(NAME, most < 0 ? "no shareable " + (r.models().isEmpty() ? "" : Gpus.models(r) + " ")
                + "GPUs" : "no GPU with " + r.milliGpu() + " milli free");
    }
}
