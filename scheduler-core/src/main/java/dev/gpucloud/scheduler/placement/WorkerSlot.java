package dev.gpucloud.scheduler.placement;

import java.util.List;

/** Where one worker (by rank) would run: a host and the indices of its GPUs. */
public record WorkerSlot(int rank, String nodeId, List<Integer> gpuIndices) {
    public WorkerSlot {
        gpuIndices = List.copyOf(gpuIndices);
    }
}
