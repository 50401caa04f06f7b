package dev.gpucloud.metrics.gpu;

import java.util.ArrayList;
import java.util.List;

/**
 * The part of the fleet one metrics-service instance exports: shard {@code index} of {@code count} owns the
 * gpu.telemetry partitions whose number modulo {@code count} is {@code index}, and so the hosts whose key
 * (nodeId) the producers' partitioner sends there; shard 0 also exports the fleet-wide series (jobs, queue
 * wait, consumer lag), so every series is exported by exactly one shard however many there are.
 *
 * @param partitions how many partitions gpu.telemetry has (the contract's count)
 */
public record FleetShard(int index, int count, int partitions) {

    /** The setting that names this instance's shard. */
    public static final String INDEX_SETTING = "gpucloud.metrics.shard";
    /** The setting that says how many shards split the fleet. */
    public static final String COUNT_SETTING = "gpucloud.metrics.shards";

    public FleetShard {
        if (partitions < 1) {
            throw new IllegalArgumentException("gpu.telemetry must have at least 1 partition, has " + partitions);
        }
        if (count < 1 || count > partitions) {
            throw new IllegalArgumentException(COUNT_SETTING + "=" + count + " is not a number of shards: it must be 1 to "
                    + partitions + " (gpu.telemetry has " + partitions + " partitions, and a shard without one would export nothing)");
        }
        if (index < 0 || index >= count) {
            throw new IllegalArgumentException(INDEX_SETTING + "=" + index + " is not a shard of " + COUNT_SETTING + "="
                    + count + ": it must be 0 to " + (count - 1));
        }
    }

    /** One instance that exports the whole fleet (no sharding). */
    public static FleetShard wholeFleet(int partitions) {
        return new FleetShard(0, 1, partitions);
    }

    /** Whether this instance exports every host (the only shard). */
    public boolean isWholeFleet() {
        return count == 1;
    }

    /** Whether the hosts keyed to this gpu.telemetry partition are this shard's. */
    public boolean ownsPartition(int partition) {
        if (partition < 0 || partition >= partitions) {
            throw new IllegalArgumentException("partition " + partition + " is not one of gpu.telemetry's " + partitions);
        }
        return partition % count == index;
    }

    /** The gpu.telemetry partitions this shard reads, in order. */
    public List<Integer> ownedPartitions() {
        List<Integer> owned = new ArrayList<>();
        for (int p = index; p < partitions; p += count) {
            owned.add(p);
        }
        return owned;
    }

    /** Whether this shard exports the series that belong to no host (jobs, queue wait, lag): shard 0 only. */
    public boolean exportsFleetWideSeries() {
        return index == 0;
    }

    @Override
    public String toString() {
        return "shard " + index + " of " + count + " (gpu.telemetry partitions " + ownedPartitions() + " of " + partitions + ")";
    }
}
