package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;

/** One sample of every GPU on a host, on {@code gpu.telemetry} keyed by nodeId. */
public record TelemetrySample(String nodeId, String hostname, Instant sampledAt, List<GpuReading> gpus) {
    public TelemetrySample {
        Require.text(nodeId, "nodeId");
        Require.text(hostname, "hostname");
        Require.present(sampledAt, "sampledAt");
        gpus = Require.list(gpus, "gpus");
    }
}
