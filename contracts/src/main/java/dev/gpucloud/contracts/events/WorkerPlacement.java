package dev.gpucloud.contracts.events;

import java.util.List;

/** Where one worker of a job runs: its rank, host, GPUs and allocation. */
public record WorkerPlacement(int rank, String nodeId, List<Integer> gpuIndices, String allocationId) {
    public WorkerPlacement {
        Require.atLeast(rank, 0, "rank");
        Require.text(nodeId, "nodeId");
        gpuIndices = Require.list(gpuIndices, "gpuIndices");
        Require.text(allocationId, "allocationId");
    }
}
