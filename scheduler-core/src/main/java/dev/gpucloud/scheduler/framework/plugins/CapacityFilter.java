package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/**
 * Capacity type and price: on-demand jobs stay off spot, spot-only jobs stay on spot, a price
 * ceiling (per job-hour: every worker priced as if on this host) is honoured, and spot pools that were recently
 * interrupted under this job are avoided.
 */
public final class CapacityFilter implements Plugins.Filter {

    public static final String NAME = "Capacity";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        boolean spot = node.capacityType() == CapacityType.SPOT;
        if (r.capacity() == CapacityPreference.ON_DEMAND && spot) {
            return Status.unschedulable(NAME, "spot capacity, job wants on-demand");
        }
        if (r.capacity() == CapacityPreference.SPOT && !spot) {
            return Status.unschedulable(NAME, "not spot capacity, job wants spot");
        }
        if (spot && !r.avoidPools().isEmpty() && r.avoidPools().contains(node.pool())) {
            return Status.unschedulable(NAME, "spot pool recently interrupted");
        }
        if (r.priceCeilingMicrosPerHour() > 0) {
            long perJob = node.pricePerGpuMicros() * r.milliPerWorker() / 1000 * r.workers();
            if (perJob > r.priceCeilingMicrosPerHour()) {
                return Status.unschedulable(NAME, "price over the job's ceiling");
            }
        }
        return Status.SUCCESS;
    }
}
