package dev.gpucloud.autoscaler.core;

/** How a host is bought: on demand (kept until released) or spot (cheaper, and reclaimable with notice). */
public enum Capacity {
    ON_DEMAND,
    SPOT
}
