package dev.gpucloud.autoscaler.provider;

import java.util.Collection;
import java.util.List;

/**
 * Where hosts come from. A launch may be fulfilled in part (a zone out of spot capacity, a throttled call): the
 * outcome says which hosts came and why the rest did not, and the caller decides what to try next. A launch is
 * idempotent on its request id, and releasing a host that is already gone is not an error.
 */
public interface FleetProvider {

    /** The provider's name in decisions and metrics ({@code simulated}, {@code aws}). */
    String name();

    /** Asks for the request's hosts, all in one call; answers what was launched and what was refused. */
    LaunchOutcome launch(LaunchRequest request);

    /** Terminates these instances; unknown or already terminated ids are ignored. */
    void release(Collection<String> instanceIds);

    /** The instances this provider launched for the fleet and that are not terminated yet. */
    List<ProviderInstance> instances();
}
