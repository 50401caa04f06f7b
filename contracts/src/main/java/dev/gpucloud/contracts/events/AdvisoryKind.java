package dev.gpucloud.contracts.events;

/** What an advisory on {@code gpu.advisories} says about an allocation. */
public enum AdvisoryKind {
    /** Its GPUs stayed under the utilization threshold for the whole window: capacity paid for and unused. */
    IDLE,
    /** Its busiest GPU uses more memory than the threshold: little headroom before an out-of-memory error. */
    MEMORY_PRESSURE
}
