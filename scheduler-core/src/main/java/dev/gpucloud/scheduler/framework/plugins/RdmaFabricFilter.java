package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/**
 * A multi-host RDMA gang only goes to hosts on an RDMA fabric; which fabric, leaves and spines is
 * chosen by the framework's topology step over the hosts that pass every filter.
 */
public final class RdmaFabricFilter implements Plugins.Filter, Plugins.PreFilter {

    public static final String NAME = "RdmaFabric";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status preFilter(CycleState state, PlacementRequest r) {
        return Status.SUCCESS;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (r.multiHostRdma() && node.fabric() == null) {
            return Status.unschedulable(NAME, "no RDMA fabric");
        }
        return Status.SUCCESS;
    }
}
