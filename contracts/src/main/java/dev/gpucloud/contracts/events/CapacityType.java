package dev.gpucloud.contracts.events;

/** How a host's capacity is bought: on demand, as spot (interruptible at a lower price), or reserved. */
public enum CapacityType {
    ON_DEMAND,
    SPOT,
    RESERVED
}
