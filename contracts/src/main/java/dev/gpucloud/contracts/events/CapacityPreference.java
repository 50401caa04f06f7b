package dev.gpucloud.contracts.events;

/** Which capacity a job accepts; SPOT_PREFERRED falls back to on-demand when no spot fits. */
public enum CapacityPreference {
    ON_DEMAND,
    SPOT,
    SPOT_PREFERRED
}
