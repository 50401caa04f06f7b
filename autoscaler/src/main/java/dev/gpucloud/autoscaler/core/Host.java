package dev.gpucloud.autoscaler.core;

/**
 * Supply: one host of a pool. {@code idleSince} is when it last became unneeded (no allocations, or utilization
 * below the configured threshold), -1 while it is busy; {@code runningJobsCheckpointable} says whether every job on
 * it can be checkpointed and moved. {@code placementGroup} is the fabric group it was launched in, or null. A
 * LAUNCHING host offers all its type's GPUs: nothing runs on a host that has not registered.
 */
public record Host(
        String hostId,
        String pool,
        String instanceType,
        Capacity capacity,
        HostState state,
        long launchedAt,
        int freeGpus,
        int allocatedGpus,
        double utilization,
        long idleSince,
        boolean runningJobsCheckpointable,
        String placementGroup) {

    public Host {
        if (hostId == null || hostId.isBlank()) {
            throw new IllegalArgumentException("hostId of a host is missing");
        }
        if (pool == null || pool.isBlank()) {
            throw new IllegalArgumentException("pool of host " + hostId + " is missing");
        }
        if (instanceType == null || instanceType.isBlank()) {
            throw new IllegalArgumentException("instanceType of host " + hostId + " is missing");
        }
        if (capacity == null) {
            throw new IllegalArgumentException("capacity of host " + hostId + " is missing");
        }
        if (state == null) {
            throw new IllegalArgumentException("state of host " + hostId + " is missing");
        }
        if (freeGpus < 0) {
            throw new IllegalArgumentException("freeGpus of host " + hostId + " must be >= 0, got " + freeGpus);
        }
        if (allocatedGpus < 0) {
            throw new IllegalArgumentException(
                    "allocatedGpus of host " + hostId + " must be >= 0, got " + allocatedGpus);
        }
        if (!(utilization >= 0 && utilization <= 1)) {
            throw new IllegalArgumentException(
                    "utilization of host " + hostId + " must be within 0..1, got " + utilization);
        }
        if (idleSince < -1) {
            throw new IllegalArgumentException(
                    "idleSince of host " + hostId + " must be a time or -1 (busy), got " + idleSince);
        }
        if (placementGroup != null && placementGroup.isBlank()) {
            placementGroup = null;
        }
    }

    /** A host asked for at {@code launchedAt} that has not registered yet. */
    public static Host launching(String hostId, String pool, String instanceType, Capacity capacity, long launchedAt,
            String placementGroup) {
        return new Host(hostId, pool, instanceType, capacity, HostState.LAUNCHING, launchedAt, 0, 0, 0, -1, true,
                placementGroup);
    }

    /** Whether the host has been unneeded since some time. */
    public boolean isIdle() {
        return idleSince >= 0;
    }
}
