package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/** The host has the worker's CPU (millicores) and memory (MiB) free. */
public final class HostResourcesFit implements Plugins.Filter {

    public static final String NAME = "HostResources";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        if (r.cpuMillis() > node.cpuFree()) {
            return Status.unschedulable(NAME, "not enough free CPU (need " + r.cpuMillis() + " millicores)");
        }
        if (r.memoryMib() > node.memoryFree()) {
            return Status.unschedulable(NAME, "not enough free memory (need " + r.memoryMib() + " MiB)");
        }
        return Status.SUCCESS;
    }
}
