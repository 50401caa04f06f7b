package dev.gpucloud.contracts.events;

import java.util.List;

/**
 * One allocation that a host's agent runs at the time of a telemetry sample: the agent's own word
 * on what holds its GPUs, which the scheduler reconciles with what it placed. {@code migInstanceUuid}
 * is the MIG instance the allocation runs on and {@code migSlot} where it sits ({@code <profile>@<start>},
 * null where the agent cannot tell); both are null for whole GPUs and fractions. {@code milliGpu} is the
 * share of the GPU a fraction holds (1000 for whole GPUs and MIG instances).
 */
public record AllocationReport(String allocationId, String jobId, String tenant, List<Integer> gpuIndices,
        String migInstanceUuid, String migSlot, int milliGpu) {

    public AllocationReport {
        Require.text(allocationId, "allocationId");
        Require.text(jobId, "jobId");
        Require.text(tenant, "tenant");
        gpuIndices = Require.list(gpuIndices, "gpuIndices");
        Require.atLeast(milliGpu, 0, "milliGpu");
    }
}
