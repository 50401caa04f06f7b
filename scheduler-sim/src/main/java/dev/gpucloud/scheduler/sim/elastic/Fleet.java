package dev.gpucloud.scheduler.sim.elastic;

import java.util.Collection;
import java.util.List;

/**
 * Where a simulation's jobs run: the hosts, in placement order, and what the fleet does at each scan. The elastic
 * fleet asks the autoscaler's core and carries out its plan; a static fleet does nothing. Each fleet bills its own
 * hosts per second.
 */
interface Fleet {

    /** A host the cloud took back at {@code atMillis}, with its jobs still on it. */
    record Lost(SimHost host, long atMillis) {}

    /** What the run's table calls it. */
    String name();

    /** The live hosts, in placement order (oldest first). */
    Collection<SimHost> hosts();

    /** Decides and acts at a scan; answers the hosts to empty now (drained: their jobs checkpoint and requeue). */
    List<SimHost> scan(long now, Collection<FleetJob> queue);

    /** Hosts reclaimed since the last call, up to {@code now}; they are gone from {@link #hosts()}. */
    List<Lost> reclaimed(long now);

    /** Bills every live host up to {@code now}. */
    void bill(long now);

    /** Bills up to {@code now} and lets every host go: the end of the run. */
    void close(long now);

    /** What the live hosts cost per hour now. */
    double spendUsdPerHour(long now);

    /** Totals so far. */
    double costUsd();

    /** Paid GPU-milliseconds: every host's GPUs from launch to release. */
    double paidGpuMillis();

    int launches();

    int releases();

    int interruptions();

    /** Hosts the autoscaler drained (their jobs checkpointed and moved). */
    default int drains() {
        return 0;
    }

    /** Spot hosts asked for that the provider could not sell as spot: bought on demand instead, or refused. */
    default int spotShortfall() {
        return 0;
    }
}
