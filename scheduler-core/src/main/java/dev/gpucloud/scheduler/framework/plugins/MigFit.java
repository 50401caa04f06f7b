package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.geometry.MigFamily;
import dev.gpucloud.geometry.MigProfile;
import dev.gpucloud.geometry.NvidiaMigTable;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/**
 * MIG fit: a MIG-mode GPU of an allowed model offers the profile and has a legal start whose
 * slices are free (NVIDIA's placement rules, see {@link MigFamily}; the table is gpu-geometry's
 * {@link NvidiaMigTable}, the one the agents check with).
 */
public final class MigFit implements Plugins.Filter, Plugins.PreFilter {

    public static final String NAME = "MigFit";

    @Override
    public String name() {
        return NAME;
    }

    /** True for a profile name some MIG-capable GPU (A30, A100, H100, H200) offers. */
    public static boolean known(String profile) {
        return NvidiaMigTable.offeredByAny(profile);
    }

    @Override
    public Status preFilter(CycleState state, PlacementRequest r) {
        if (r.kind() == PlacementRequest.Kind.MIG && !known(r.migProfile())) {
            return Status.unresolvable(NAME, "unknown MIG profile " + r.migProfile());
        }
        return Status.SUCCESS;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (r.kind() != PlacementRequest.Kind.MIG) {
            return Status.SUCCESS;
        }
        if ((r.models().isEmpty() || (!node.mixedModels() && r.models().contains(node.model())))
                && node.migBestPercent(r.migProfile()) >= 0) {
            return Status.SUCCESS; // the host's kept summary: some MIG GPU, all of them allowed, has a free start
        }
        boolean migGpu = false;
        boolean offered = false;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (g.mig() == null || !Gpus.modelAllowed(r, g)) {
                continue;
            }
            migGpu = true;
            MigProfile p = g.mig().profile(r.migProfile()).orElse(null);
            if (p == null) {
                continue;
            }
            offered = true;
            if (g.mig().bestStart(p, g.migMask()) >= 0) {
                return Status.SUCCESS;
            }
        }
        if (!migGpu) {
            return Status.unschedulable(NAME, "no MIG-mode GPUs");
        }
        return Status.unschedulable(NAME, offered ? "no free " + r.migProfile() + " slot"
                : "MIG profile " + r.migProfile() + " not offered by " + node.model());
    }
}
