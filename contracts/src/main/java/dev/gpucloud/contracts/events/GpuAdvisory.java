package dev.gpucloud.contracts.events;

import java.time.Instant;

/**
 * Advice about one allocation's GPUs, on {@code gpu.advisories} keyed by allocationId, raised by
 * metrics-service when the condition starts to hold (once, until it clears). {@code valuePercent} is
 * the mean GPU utilization (IDLE) or the busiest GPU's memory use (MEMORY_PRESSURE) that raised it,
 * and {@code thresholdPercent} the limit it crossed; {@code since} is when the condition began.
 */
public record GpuAdvisory(
        AdvisoryKind kind,
        String allocationId,
        String jobId,
        String tenant,
        String nodeId,
        Instant since,
        Instant raisedAt,
        double valuePercent,
        double thresholdPercent) {

    public GpuAdvisory {
        Require.present(kind, "kind");
        Require.text(allocationId, "allocationId");
        Require.text(jobId, "jobId");
        Require.text(tenant, "tenant");
        Require.text(nodeId, "nodeId");
        Require.present(since, "since");
        Require.present(raisedAt, "raisedAt");
        Require.between(valuePercent, 0, 100, "valuePercent");
        Require.between(thresholdPercent, 0, 100, "thresholdPercent");
    }
}
