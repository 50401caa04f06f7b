package dev.gpucloud.agent.sim;

import java.time.Duration;

/**
 * How a simulated fleet behaves: which hosts it has ({@link FleetSpec}), how their node ids start,
 * their zone, the seed its readings are drawn from, how usage is cut, how long a run lasts when
 * it does not say, and how long a checkpoint takes to save.
 */
public record SimulationSettings(
        String fleet,
        String nodePrefix,
        String zone,
        long seed,
        Duration usageInterval,
        Duration defaultRunDuration,
        Duration checkpointSave) {

    public SimulationSettings {
        if (nodePrefix == null || nodePrefix.isBlank()) {
            throw new IllegalArgumentException("node prefix must not be blank");
        }
        if (zone == null || zone.isBlank()) {
            throw new IllegalArgumentException("zone must not be blank");
        }
        if (usageInterval.isNegative() || usageInterval.isZero()) {
            throw new IllegalArgumentException("usage interval must be positive, was " + usageInterval);
        }
        if (defaultRunDuration.isNegative()) {
            throw new IllegalArgumentException("default run duration must not be negative");
        }
        if (checkpointSave.isNegative()) {
            throw new IllegalArgumentException("checkpoint save time must not be negative");
        }
    }

    /** The default fleet: one host of each kind the project's documents name. */
    public static final String DEFAULT_FLEET = "a100x8:1,h100x8:1,a10g:1,v100-spot:1";

    public static SimulationSettings defaults() {
        return new SimulationSettings(DEFAULT_FLEET, "sim", "local-1a", 42, Duration.ofSeconds(10),
                Duration.ofSeconds(30), Duration.ofSeconds(2));
    }

    public SimulationSettings withFleet(String fleet) {
        return new SimulationSettings(fleet, nodePrefix, zone, seed, usageInterval, defaultRunDuration, checkpointSave);
    }
}
