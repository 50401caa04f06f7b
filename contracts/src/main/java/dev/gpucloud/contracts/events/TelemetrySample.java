package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;
import java.util.List;

/** One sample of every GPU on a host, on {@code gpu.telemetry} keyed by nodeId. */
public record TelemetrySample(String nodeId, String hostname, Instant sampledAt, List<GpuReading> gpus) {
    public TelemetrySample {
        Check.text(nodeId, Limits.ID, "nodeId");
        Check.text(hostname, Limits.HOSTNAME, "hostname");
        Require.present(sampledAt, "sampledAt");
        gpus = Check.size(Require.list(gpus, "gpus"), Limits.GPUS_PER_HOST, "gpus");
    }
}
