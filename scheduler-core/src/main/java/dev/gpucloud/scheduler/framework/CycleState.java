package dev.gpucloud.scheduler.framework;

import dev.gpucloud.scheduler.cluster.Fleet;

/**
 * What one scheduling cycle knows beyond the request: the fleet, the time, and the health windows.
 * Plugins read it; the framework makes one per decision.
 */
public final class CycleState {

    private final Fleet fleet;
    private final long nowMillis;
    private final Profile profile;

    CycleState(Fleet fleet, long nowMillis, Profile profile) {
        this.fleet = fleet;
        this.nowMillis = nowMillis;
        this.profile = profile;
    }

    public Fleet fleet() {
        return fleet;
    }

    public long nowMillis() {
        return nowMillis;
    }

    public Profile profile() {
        return profile;
    }

    /** The dearest GPU-hour in the fleet, for normalising price scores. */
    public long maxPricePerGpuMicros() {
        return fleet.maxPricePerGpuMicros();
    }
}
