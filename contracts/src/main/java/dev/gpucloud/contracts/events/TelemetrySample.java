package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;
import java.util.List;

/**
 * One sample of every GPU on a host, on {@code gpu.telemetry} keyed by nodeId. {@code allocations}
 * lists what the host's agent runs at {@code sampledAt}: the scheduler reconciles it with what it
 * placed. It is null from an agent that does not report its allocations (older agents), which is not
 * the same as an empty list (an agent that runs nothing).
 */
public record TelemetrySample(String nodeId, String hostname, Instant sampledAt, List<GpuReading> gpus,
        List<AllocationReport> allocations) {
    public TelemetrySample {
        Check.text(nodeId, Limits.ID, "nodeId");
        Check.text(hostname, Limits.HOSTNAME, "hostname");
        Require.present(sampledAt, "sampledAt");
        gpus = Check.size(Require.list(gpus, "gpus"), Limits.GPUS_PER_HOST, "gpus");
        allocations = allocations == null ? null
                : Check.size(Require.list(allocations, "allocations"), Limits.SHORT_LIST, "allocations");
    }

    /** A sample that says nothing of the host's allocations. */
    public TelemetrySample(String nodeId, String hostname, Instant sampledAt, List<GpuReading> gpus) {
        this(nodeId, hostname, sampledAt, gpus, null);
    }

    /** This sample with the allocations the agent runs on the host. */
    public TelemetrySample withAllocations(List<AllocationReport> running) {
        return new TelemetrySample(nodeId, hostname, sampledAt, gpus, running);
    }
}
