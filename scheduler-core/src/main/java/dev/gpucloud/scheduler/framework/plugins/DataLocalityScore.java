package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;

/** Prefers hosts whose local NVMe already caches the job's dataset (as the agent reports it). */
public final class DataLocalityScore implements Plugins.Score {

    public static final String NAME = "DataLocality";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int score(CycleState state, PlacementRequest r, NodeState node) {
        return r.dataset() != null && node.datasets().contains(r.dataset()) ? 100 : 0;
    }

    @Override
    public int maxScore(CycleState state, PlacementRequest r) {
        return r.dataset() == null ? 0 : 100;
    }
}
