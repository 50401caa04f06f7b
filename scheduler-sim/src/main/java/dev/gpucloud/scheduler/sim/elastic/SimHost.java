package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.autoscaler.core.Capacity;
import java.util.ArrayList;
import java.util.List;

/**
 * A host of a simulated fleet: its type, GPUs, capacity, placement group, the jobs on it, and since when it has
 * been unneeded (empty or below the low-utilization threshold; -1 while busy). Mutable, private to one simulation.
 */
final class SimHost {

    /** The most GPUs one worker takes: one host's worth on the types simulated. */
    static final int MAX_GPUS = 8;

    final String id;
    final String type;
    final int gpus;
    final Capacity capacity;
    final String placementGroup;
    final long launchedAt;
    final double onDemandUsdPerHour;
    boolean running;
    boolean draining;
    int free;
    long idleSince;
    final List<FleetJob> jobs = new ArrayList<>();
    /** Billed up to here. */
    long billedTo;

    SimHost(String id, String type, int gpus, Capacity capacity, String placementGroup, long launchedAt,
            double onDemandUsdPerHour) {
        this.id = id;
        this.type = type;
        this.gpus = gpus;
        this.capacity = capacity;
        this.placementGroup = placementGroup;
        this.launchedAt = launchedAt;
        this.onDemandUsdPerHour = onDemandUsdPerHour;
        this.free = gpus;
        this.idleSince = -1;
        this.billedTo = launchedAt;
    }

    int allocated() {
        return gpus - free;
    }

    boolean takesWork() {
        return running && !draining;
    }

    /** Updates {@link #idleSince} after an allocation changed at {@code now}. */
    void touched(long now, double lowUtilization) {
        boolean unneeded = free == gpus || (double) allocated() / gpus < lowUtilization;
        if (!unneeded) {
            idleSince = -1;
        } else if (idleSince < 0) {
            idleSince = now;
        }
    }
}
