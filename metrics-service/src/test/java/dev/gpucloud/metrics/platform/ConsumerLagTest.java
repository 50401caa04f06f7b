package dev.gpucloud.metrics.platform;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.metrics.platform.ConsumerLag.Lag;
import dev.gpucloud.metrics.platform.ConsumerLag.Partition;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ConsumerLagTest {

    private static final Partition USAGE_0 = new Partition("usage.events", 0);
    private static final Partition USAGE_1 = new Partition("usage.events", 1);
    private static final Partition JOBS_0 = new Partition("job.events", 0);
    private static final Pattern ALL = Pattern.compile(".*");

    @Test
    void lag_is_summed_over_a_topics_partitions_per_group() {
        var lags = ConsumerLag.of(Map.of("billing", Map.of(USAGE_0, 10L, USAGE_1, 5L, JOBS_0, 7L)),
                Map.of(USAGE_0, 15L, USAGE_1, 5L, JOBS_0, 9L), ALL, 100);

        assertThat(lags).containsExactly(new Lag("billing", "job.events", 2), new Lag("billing", "usage.events", 5));
    }

    @Test
    void an_offset_past_the_end_is_no_lag_and_an_unknown_partition_is_skipped() {
        var lags = ConsumerLag.of(Map.of("g", Map.of(USAGE_0, 20L, JOBS_0, 1L)), Map.of(USAGE_0, 15L), ALL, 100);

        assertThat(lags).containsExactly(new Lag("g", "usage.events", 0));
    }

    @Test
    void groups_outside_the_pattern_and_series_beyond_the_cap_are_left_out() {
        var committed = Map.of("a", Map.of(USAGE_0, 1L), "b", Map.of(USAGE_0, 1L), "test-1", Map.of(USAGE_0, 1L));
        var lags = ConsumerLag.of(committed, Map.of(USAGE_0, 3L), Pattern.compile("(?!test-).*"), 1);

        assertThat(lags).containsExactly(new Lag("a", "usage.events", 2));
    }
}
