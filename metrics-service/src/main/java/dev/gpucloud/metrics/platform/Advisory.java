package dev.gpucloud.metrics.platform;

import java.time.Instant;
import java.util.Objects;

/**
 * Advice about one allocation: its GPUs have stayed under the utilization threshold for the whole
 * window (IDLE), or its GPU memory use passed the pressure threshold (MEMORY_PRESSURE).
 * {@code value} is the mean utilization (%) or the highest memory use (%) that raised it.
 */
public record Advisory(Kind kind, String allocationId, String jobId, String tenant, String nodeId, Instant since,
                       double value) {

    /** What the advice is about. */
    public enum Kind {
        IDLE("idle"),
        MEMORY_PRESSURE("memory_pressure");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /** The value of the {@code kind} label. */
        public String label() {
            return label;
        }
    }

    public Advisory {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(allocationId, "allocationId");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(since, "since");
    }
}
