package dev.gpucloud.metrics.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which partitions, hosts and series a shard owns. Plain JUnit: the rule imports nothing. */
class FleetShardTest {

    private static final int PARTITIONS = 6;

    @ParameterizedTest(name = "{0} shards: every partition has exactly one owner")
    @CsvSource({"1", "2", "3", "4", "5", "6"})
    void every_partition_has_exactly_one_owner(int shards) {
        List<Integer> seen = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            FleetShard shard = new FleetShard(i, shards, PARTITIONS);
            assertThat(shard.ownedPartitions()).isNotEmpty();
            for (int p : shard.ownedPartitions()) {
                assertThat(shard.ownsPartition(p)).isTrue();
                for (int other = 0; other < shards; other++) {
                    assertThat(new FleetShard(other, shards, PARTITIONS).ownsPartition(p)).isEqualTo(other == i);
                }
            }
            seen.addAll(shard.ownedPartitions());
        }
        assertThat(seen).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
    }

    @Test
    void shard_1_of_3_reads_partitions_1_and_4() {
        FleetShard shard = new FleetShard(1, 3, PARTITIONS);
        assertThat(shard.ownedPartitions()).containsExactly(1, 4);
        assertThat(shard.isWholeFleet()).isFalse();
        assertThat(shard.exportsFleetWideSeries()).isFalse();
        assertThat(shard).hasToString("shard 1 of 3 (gpu.telemetry partitions [1, 4] of 6)");
    }

    @Test
    void only_shard_0_exports_the_fleet_wide_series() {
        assertThat(FleetShard.wholeFleet(PARTITIONS).exportsFleetWideSeries()).isTrue();
        assertThat(FleetShard.wholeFleet(PARTITIONS).isWholeFleet()).isTrue();
        assertThat(new FleetShard(0, 2, PARTITIONS).exportsFleetWideSeries()).isTrue();
        assertThat(new FleetShard(1, 2, PARTITIONS).exportsFleetWideSeries()).isFalse();
    }

    @ParameterizedTest(name = "shard {0} of {1}: {2}")
    @CsvSource(delimiter = '|', value = {
        "3 | 2 | gpucloud.metrics.shard=3 is not a shard of gpucloud.metrics.shards=2: it must be 0 to 1",
        "2 | 2 | gpucloud.metrics.shard=2 is not a shard of gpucloud.metrics.shards=2: it must be 0 to 1",
        "-1 | 2 | gpucloud.metrics.shard=-1 is not a shard of gpucloud.metrics.shards=2: it must be 0 to 1",
        "0 | 0 | gpucloud.metrics.shards=0 is not a number of shards: it must be 1 to 6",
        "0 | -3 | gpucloud.metrics.shards=-3 is not a number of shards: it must be 1 to 6",
        "0 | 7 | gpucloud.metrics.shards=7 is not a number of shards: it must be 1 to 6 (gpu.telemetry has 6 partitions"})
    void a_shard_out_of_range_is_refused_naming_the_setting(int index, int count, String message) {
        assertThatThrownBy(() -> new FleetShard(index, count, PARTITIONS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith(message);
    }

    @Test
    void a_partition_the_topic_does_not_have_is_refused() {
        assertThatThrownBy(() -> new FleetShard(0, 2, PARTITIONS).ownsPartition(6))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partition 6");
        assertThatThrownBy(() -> new FleetShard(0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
