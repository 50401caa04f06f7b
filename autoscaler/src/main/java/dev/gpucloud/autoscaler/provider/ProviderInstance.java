package dev.gpucloud.autoscaler.provider;

import dev.gpucloud.autoscaler.core.Capacity;
import java.time.Instant;
import java.util.Objects;

/** One host as its provider sees it. {@code nodeId} is the name its node agent will report under, once known. */
public record ProviderInstance(
        String instanceId,
        String instanceType,
        Capacity capacity,
        String zone,
        String placementGroup,
        State state,
        Instant launchedAt,
        String pool) {

    public ProviderInstance {
        Objects.requireNonNull(instanceId, "instanceId");
        Objects.requireNonNull(instanceType, "instanceType");
        Objects.requireNonNull(capacity, "capacity");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(launchedAt, "launchedAt");
    }

    /** The provider's life of an instance, folded to what the autoscaler acts on. */
    public enum State {
        PENDING,
        RUNNING,
        STOPPING,
        TERMINATED
    }
}
