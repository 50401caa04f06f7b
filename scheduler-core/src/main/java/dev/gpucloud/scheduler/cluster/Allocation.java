package dev.gpucloud.scheduler.cluster;

import java.util.List;

/** GPUs held on one host by one worker of a job. */
public record Allocation(String allocationId, String jobId, int rank, String nodeId, List<Integer> gpuIndices) {
    public Allocation {
        if (allocationId == null || jobId == null || nodeId == null) {
            throw new IllegalArgumentException("an allocation needs its id, job and host");
        }
        gpuIndices = List.copyOf(gpuIndices);
    }
}
