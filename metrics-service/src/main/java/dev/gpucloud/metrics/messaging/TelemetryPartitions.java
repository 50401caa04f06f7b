package dev.gpucloud.metrics.messaging;

import dev.gpucloud.metrics.gpu.FleetShard;
import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;

/**
 * Which gpu.telemetry partition a host's samples land on: Kafka's own partitioner for a keyed record (the
 * murmur2 hash of the nodeId key), which every agent's producer uses, so a shard can tell its hosts from a
 * nodeId alone (an inventory record, an allocation) before any of their telemetry arrives.
 */
public final class TelemetryPartitions {

    private TelemetryPartitions() {
    }

    /** The partition of {@code partitions} that a record keyed {@code nodeId} is sent to. */
    public static int of(String nodeId, int partitions) {
        return BuiltInPartitioner.partitionForKey(nodeId.getBytes(StandardCharsets.UTF_8), partitions);
    }

    /** The hosts the shard exports: those whose telemetry lands on one of its partitions. */
    public static Predicate<String> hostsOf(FleetShard shard) {
        if (shard.isWholeFleet()) {
            return nodeId -> true;
        }
        return nodeId -> shard.ownsPartition(of(nodeId, shard.partitions()));
    }
}
