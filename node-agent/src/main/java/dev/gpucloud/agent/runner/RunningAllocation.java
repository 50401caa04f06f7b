package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.List;

/**
 * One allocation running on a host: what it holds and since when. {@code endsAt} is known only
 * for simulated runs (null otherwise); {@code usageReportedUntil} is where the last usage interval
 * ended.
 */
public record RunningAllocation(
        String allocationId,
        String jobId,
        String tenant,
        String nodeId,
        List<Integer> gpuIndices,
        String migInstanceUuid,
        Sku sku,
        int units,
        Instant startedAt,
        Instant endsAt,
        Instant usageReportedUntil) {

    public RunningAllocation {
        gpuIndices = List.copyOf(gpuIndices);
    }
}
