package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
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
        Check.text(allocationId, Limits.ID, "allocationId");
        Check.text(jobId, Limits.ID, "jobId");
        Check.text(tenant, Limits.ID, "tenant");
        gpuIndices = Check.size(Require.list(gpuIndices, "gpuIndices"), Limits.GPUS_PER_HOST, "gpuIndices");
        Check.optionalText(migInstanceUuid, Limits.LABEL_TEXT, "migInstanceUuid");
        Check.optionalText(migSlot, Limits.LABEL_TEXT, "migSlot");
        Require.atLeast(milliGpu, 0, "milliGpu");
    }
}
