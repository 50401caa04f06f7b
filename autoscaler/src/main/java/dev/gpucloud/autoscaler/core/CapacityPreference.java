package dev.gpucloud.autoscaler.core;

/**
 * What a job asked for. {@code ANY} lets the autoscaler choose: spot for a checkpointable job (it survives a
 * reclaim), on demand for one that does not.
 */
public enum CapacityPreference {
    SPOT,
    ON_DEMAND,
    ANY
}
