package dev.gpucloud.autoscaler.core;

import java.util.List;
import java.util.Objects;

/**
 * Hosts to ask for: {@code count} of one type for one pool. A fabric gang's hosts carry its {@code placementGroup}
 * (null otherwise); spot launches may fall back to on demand ({@code onDemandFallback}); {@code jobIds} are the
 * pending jobs they are for (empty for a pool topped up to its minimum); {@code usdPerHour} is their price together.
 */
public record Launch(String pool, String instanceType, int count, Capacity capacity, boolean onDemandFallback,
        String placementGroup, List<String> zones, List<String> jobIds, double usdPerHour) {

    public Launch {
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(instanceType, "instanceType");
        Objects.requireNonNull(capacity, "capacity");
        if (count < 1) {
            throw new IllegalArgumentException("count of a launch must be at least 1, got " + count);
        }
        zones = List.copyOf(zones);
        jobIds = List.copyOf(jobIds);
    }
}
