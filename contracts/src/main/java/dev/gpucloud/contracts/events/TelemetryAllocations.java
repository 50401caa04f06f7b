package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.util.List;

/**
 * The part of a {@link TelemetrySample} the scheduler reads on every sample: which host, and what it says it
 * runs (null: it does not say). Decoding only this skips the GPU readings without building them, which at
 * 10,000 hosts sampling every 15 s is most of what reading telemetry cost the scheduler.
 */
public record TelemetryAllocations(String nodeId, List<AllocationReport> allocations) {
    public TelemetryAllocations {
        Check.text(nodeId, Limits.ID, "nodeId");
        allocations = allocations == null ? null
                : Check.size(Require.list(allocations, "allocations"), Limits.SHORT_LIST, "allocations");
    }
}
