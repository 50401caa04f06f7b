package dev.gpucloud.contracts.events;

import java.util.List;

/**
 * Where one worker of a job runs: its rank, host, GPUs and allocation; for a MIG worker,
 * {@code migInstance} is the slot the scheduler chose ({@code 3g.40gb@4}) until the agent reports the
 * instance's UUID, then that UUID (null for whole GPUs and fractions).
 */
public record WorkerPlacement(int rank, String nodeId, List<Integer> gpuIndices, String allocationId,
        String migInstance) {
    public WorkerPlacement {
        Require.atLeast(rank, 0, "rank");
        Require.text(nodeId, "nodeId");
        gpuIndices = Require.list(gpuIndices, "gpuIndices");
        Require.text(allocationId, "allocationId");
        if (migInstance != null) {
            Require.text(migInstance, "migInstance");
        }
    }

    /** A worker on whole GPUs or a fraction. */
    public WorkerPlacement(int rank, String nodeId, List<Integer> gpuIndices, String allocationId) {
        this(rank, nodeId, gpuIndices, allocationId, null);
    }
}
