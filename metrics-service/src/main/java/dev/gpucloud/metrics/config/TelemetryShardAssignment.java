package dev.gpucloud.metrics.config;

import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.metrics.gpu.FleetShard;
import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Turns gpucloud.metrics.shard and gpucloud.metrics.shards into the telemetry channel's partitions: a shard of
 * several is assigned its own gpu.telemetry partitions (read from their end, as the one instance reads from the
 * end of all of them) instead of joining a consumer group, and commits nothing, since no other instance ever
 * takes those partitions over. A setting out of range stops the service at start-up with a message naming it.
 */
public final class TelemetryShardAssignment implements ConfigSourceFactory {

    /** Above application.properties (250), below environment variables (300) and system properties (400). */
    static final int ORDINAL = 275;
    private static final String CHANNEL = "mp.messaging.incoming.telemetry-in.";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        FleetShard shard = shardOf(context);
        if (shard.isWholeFleet()) {
            return List.of();
        }
        return List.of(new MapBackedConfigSource("gpucloud telemetry shard", settings(shard), ORDINAL) {
        });
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(ORDINAL);
    }

    /** The shard the settings name, checked: shard 3 of 2 or 0 shards is an error naming the setting. */
    static FleetShard shardOf(ConfigSourceContext context) {
        int index = number(context, FleetShard.INDEX_SETTING, 0);
        int count = number(context, FleetShard.COUNT_SETTING, 1);
        return new FleetShard(index, count, Topics.GPU_TELEMETRY.partitions());
    }

    /** The channel settings of a shard: its partitions, each from its end, and no offset commits. */
    static Map<String, String> settings(FleetShard shard) {
        String partitions = shard.ownedPartitions().stream()
                .map(p -> Topics.GPU_TELEMETRY.name() + ":" + p + ":-1")
                .collect(Collectors.joining(","));
        return Map.of(
                CHANNEL + "assign-seek", partitions,
                CHANNEL + "commit-strategy", "ignore",
                CHANNEL + "enable.auto.commit", "false");
    }

    private static int number(ConfigSourceContext context, String name, int otherwise) {
        ConfigValue value = context.getValue(name);
        if (value == null || value.getValue() == null || value.getValue().isBlank()) {
            return otherwise;
        }
        try {
            return Integer.parseInt(value.getValue().strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "='" + value.getValue() + "' is not a whole number", e);
        }
    }
}
