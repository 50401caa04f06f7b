package dev.gpucloud.contracts.events;

/** What happened to a host. */
public enum NodeEventType {
    /** The agent (or the scheduler on its behalf) stopped hearing from the host. */
    HEARTBEAT_LOST,
    /** The cloud will reclaim this spot host at {@code deadline}. */
    SPOT_INTERRUPTION,
    /** The cloud advises moving work off this host soon; no deadline yet. */
    REBALANCE_RECOMMENDATION,
    /** A GPU reported an XID error; {@code xid} says which. */
    XID_ERROR,
    /** A GPU reported uncorrectable ECC errors. */
    ECC_ERROR,
    /** An operator drains the host: no new work lands on it. */
    DRAIN,
    /** The host accepts work again after a drain. */
    UNDRAIN
}
