package dev.gpucloud.autoscaler.provider;

import java.util.List;

/** What a launch gave: the instances that are on their way, and a refusal for each part that did not come. */
public record LaunchOutcome(List<ProviderInstance> launched, List<LaunchError> errors) {

    public LaunchOutcome {
        launched = List.copyOf(launched);
        errors = List.copyOf(errors);
    }

    /**
     * Why part of a launch did not come, in the provider's words ({@code InsufficientInstanceCapacity},
     * {@code RequestLimitExceeded}, ...), with the zone and capacity it concerned where the provider says.
     */
    public record LaunchError(String code, String message, String zone, dev.gpucloud.autoscaler.core.Capacity capacity) {}
}
