package dev.gpucloud.metrics.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigValue;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

/**
 * The telemetry channel's settings derived from gpucloud.metrics.shard and shards, and the start-up error for a
 * shard out of range. Plain JUnit on the factory Quarkus loads; the settings come from a map as config would.
 */
class TelemetryShardAssignmentTest {

    private static final String CHANNEL = "mp.messaging.incoming.telemetry-in.";

    @Test
    void one_instance_keeps_the_consumer_group() {
        assertThat(new TelemetryShardAssignment().getConfigSources(context(Map.of()))).isEmpty();
        assertThat(new TelemetryShardAssignment().getConfigSources(context(Map.of(
                "gpucloud.metrics.shard", "0", "gpucloud.metrics.shards", "1")))).isEmpty();
    }

    @Test
    void shard_1_of_2_is_assigned_the_odd_partitions_from_their_end_and_commits_nothing() {
        List<ConfigSource> sources = list(new TelemetryShardAssignment().getConfigSources(context(Map.of(
                "gpucloud.metrics.shard", "1", "gpucloud.metrics.shards", "2"))));
        assertThat(sources).hasSize(1);
        ConfigSource source = sources.get(0);
        assertThat(source.getValue(CHANNEL + "assign-seek")).isEqualTo("gpu.telemetry:1:-1,gpu.telemetry:3:-1,gpu.telemetry:5:-1");
        assertThat(source.getValue(CHANNEL + "commit-strategy")).isEqualTo("ignore");
        assertThat(source.getValue(CHANNEL + "enable.auto.commit")).isEqualTo("false");
        // above application.properties, below the environment and -D
        assertThat(source.getOrdinal()).isBetween(251, 299);
    }

    @Test
    void shard_3_of_2_stops_the_start_naming_the_setting() {
        assertThatThrownBy(() -> new TelemetryShardAssignment().getConfigSources(context(Map.of(
                "gpucloud.metrics.shard", "3", "gpucloud.metrics.shards", "2"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("gpucloud.metrics.shard=3 is not a shard of gpucloud.metrics.shards=2");
    }

    @Test
    void zero_shards_stops_the_start_naming_the_setting() {
        assertThatThrownBy(() -> new TelemetryShardAssignment().getConfigSources(context(Map.of(
                "gpucloud.metrics.shards", "0"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("gpucloud.metrics.shards=0 is not a number of shards");
    }

    @Test
    void a_shard_that_is_not_a_number_is_refused_naming_the_setting() {
        assertThatThrownBy(() -> new TelemetryShardAssignment().getConfigSources(context(Map.of(
                "gpucloud.metrics.shard", "first", "gpucloud.metrics.shards", "2"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("gpucloud.metrics.shard='first' is not a whole number");
    }

    private static ConfigSourceContext context(Map<String, String> settings) {
        return new ConfigSourceContext() {
            @Override
            public ConfigValue getValue(String name) {
                return ConfigValue.builder().withName(name).withValue(settings.get(name)).build();
            }

            @Override
            public Iterator<String> iterateNames() {
                return settings.keySet().iterator();
            }
        };
    }

    private static List<ConfigSource> list(Iterable<ConfigSource> sources) {
        List<ConfigSource> result = new java.util.ArrayList<>();
        sources.forEach(result::add);
        return result;
    }
}
