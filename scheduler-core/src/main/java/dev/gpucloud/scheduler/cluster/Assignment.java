package dev.gpucloud.scheduler.cluster;

import java.util.List;

/**
 * What one worker of a job holds on one host: whole GPUs ({@code gpuIndices}), or one MIG slice
 * ({@code migProfile} at slice {@code migStart} of GPU {@code gpuIndices[0]}), or {@code milliGpu}
 * of one shared GPU; plus CPU and memory.
 */
public record Assignment(
        String allocationId,
        String jobId,
        String tenant,
        int rank,
        String nodeId,
        List<Integer> gpuIndices,
        String migProfile,
        int migStart,
        int milliGpu,
        int cpuMillis,
        long memoryMib) {

    public Assignment {
        if (allocationId == null || jobId == null || nodeId == null) {
            throw new IllegalArgumentException("an assignment needs its allocation id, job and host");
        }
        gpuIndices = List.copyOf(gpuIndices);
        if (gpuIndices.isEmpty()) {
            throw new IllegalArgumentException("assignment " + allocationId + " holds no GPU");
        }
        if (migProfile != null && (gpuIndices.size() != 1 || migStart < 0)) {
            throw new IllegalArgumentException("MIG assignment " + allocationId + " needs one GPU and a start slice");
        }
        if (milliGpu < 0 || milliGpu > 1000 || (milliGpu > 0 && milliGpu < 1000 && gpuIndices.size() != 1)) {
            throw new IllegalArgumentException("fractional assignment " + allocationId + " needs one GPU and 1..999 milli");
        }
    }

    /** Whole GPUs, each wholly held. */
    public static Assignment whole(String allocationId, String jobId, String tenant, int rank, String nodeId,
            List<Integer> gpus, int cpuMillis, long memoryMib) {
        return new Assignment(allocationId, jobId, tenant, rank, nodeId, gpus, null, -1, 1000, cpuMillis, memoryMib);
    }

    public boolean isMig() {
        return migProfile != null;
    }

    public boolean isFraction() {
        return migProfile == null && milliGpu < 1000;
    }

    /** GPU-equivalents this assignment holds, in milli (a MIG slice counts its compute share of 7). */
    public int milliHeld() {
        if (isMig()) {
            return 0;
        }
        return isFraction() ? milliGpu : gpuIndices.size() * 1000;
    }
}
