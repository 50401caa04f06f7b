package dev.gpucloud.autoscaler.provider;

import dev.gpucloud.autoscaler.core.Capacity;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Hosts of one instance type for one pool. {@code placementGroup} keeps them on one network fabric (an RDMA
 * gang's hosts), or is null; {@code zones} are those the provider may use, in order of preference; spot
 * requests fall back to on demand only where {@code onDemandFallback} says so.
 */
public record LaunchRequest(
        String requestId,
        String pool,
        String instanceType,
        int count,
        Capacity capacity,
        boolean onDemandFallback,
        List<String> zones,
        String placementGroup,
        Map<String, String> tags) {

    public LaunchRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(instanceType, "instanceType");
        Objects.requireNonNull(capacity, "capacity");
        if (requestId.isBlank()) {
            throw new IllegalArgumentException("requestId is blank");
        }
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, got " + count);
        }
        zones = List.copyOf(zones);
        tags = Map.copyOf(tags);
    }
}
