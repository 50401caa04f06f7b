package dev.gpucloud.autoscaler.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The autoscaler's timings and thresholds. A host unneeded for {@code idleTimeout} is released (Cluster
 * Autoscaler's scale-down-unneeded-time, 10 min); one busy below {@code lowUtilizationThreshold} (0.70) for as long
 * is drained when its jobs can move; a host that has not registered within {@code launchTimeout} (Cluster
 * Autoscaler's max-node-provision-time, 15 min) is released as never registered; the service decides every
 * {@code scanInterval} (10 s).
 */
public record AutoscalerConfig(Duration idleTimeout, double lowUtilizationThreshold, Duration launchTimeout,
        Duration scanInterval) {

    public AutoscalerConfig {
        requirePositive(idleTimeout, "idleTimeout");
        requirePositive(launchTimeout, "launchTimeout");
        requirePositive(scanInterval, "scanInterval");
        if (!(lowUtilizationThreshold >= 0 && lowUtilizationThreshold <= 1)) {
            throw new IllegalArgumentException(
                    "lowUtilizationThreshold must be within 0..1, got " + lowUtilizationThreshold);
        }
    }

    /** 10 min idle, 0.70 utilization, 15 min to register, a decision every 10 s. */
    public static AutoscalerConfig defaults() {
        return new AutoscalerConfig(Duration.ofMinutes(10), 0.70, Duration.ofMinutes(15), Duration.ofSeconds(10));
    }

    private static void requirePositive(Duration d, String field) {
        Objects.requireNonNull(d, field);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, got " + d);
        }
    }
}
