package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;

/**
 * Cost: the cheaper the GPU-hour the better; a job that prefers spot scores spot hosts above any
 * on-demand host.
 */
public final class SpotCostScore implements Plugins.Score {

    public static final String NAME = "SpotCost";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int score(CycleState state, PlacementRequest r, NodeState node) {
        long max = state.maxPricePerGpuMicros();
        int cheap = (int) (100 - 100 * Math.min(max, node.pricePerGpuMicros()) / max);
        if (r.capacity() == CapacityPreference.SPOT_PREFERRED) {
            return node.capacityType() == CapacityType.SPOT ? 50 + cheap / 2 : cheap / 2;
        }
        return cheap;
    }

    /** What the cheapest GPU-hour any host has offered would score: no host scores more. */
    @Override
    public int maxScore(CycleState state, PlacementRequest r) {
        long max = state.maxPricePerGpuMicros();
        long min = Math.max(0, state.fleet().minPricePerGpuMicros());
        int cheap = (int) (100 - 100 * Math.min(max, min) / max);
        return r.capacity() == CapacityPreference.SPOT_PREFERRED ? 50 + cheap / 2 : cheap;
    }
}
