package dev.gpucloud.autoscaler.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Invalid records are refused at construction, and the message names the field. */
class RecordValidationTest {

    private static PendingJob job(int workers, int gpw, double ceiling) {
        return new PendingJob("j", "train", workers, gpw, List.of(), false, CapacityPreference.ANY, false, ceiling, 0);
    }

    @Test
    void pending_jobs() {
        assertThatThrownBy(() -> job(0, 1, 0)).hasMessageContaining("workers of job j");
        assertThatThrownBy(() -> job(1, 0, 0)).hasMessageContaining("gpusPerWorker of job j");
        assertThatThrownBy(() -> job(1, 1, -2)).hasMessageContaining("maxUsdPerHour of job j");
        assertThatThrownBy(() -> new PendingJob("j", "", 1, 1, List.of(), false, CapacityPreference.ANY, false, 0, 0))
                .hasMessageContaining("pool of job j");
        assertThatThrownBy(() -> new PendingJob("j", "p", 1, 1, List.of(), false, null, false, 0, 0))
                .hasMessageContaining("capacity of job j");
        assertThat(job(1, 1, Double.NaN).hasPriceCeiling()).isFalse();
        assertThat(job(1, 1, 0).hasPriceCeiling()).isFalse();
        assertThat(job(2, 4, 3).totalGpus()).isEqualTo(8);
    }

    @Test
    void hosts() {
        assertThatThrownBy(() -> new Host("h", "p", "g5.xlarge", Capacity.SPOT, HostState.RUNNING, 0, 0, 0, 1.5, -1,
                true, null)).hasMessageContaining("utilization of host h");
        assertThatThrownBy(() -> new Host("h", "p", "g5.xlarge", Capacity.SPOT, HostState.RUNNING, 0, -1, 0, 0, -1,
                true, null)).hasMessageContaining("freeGpus of host h");
        assertThatThrownBy(() -> new Host("h", "p", "g5.xlarge", Capacity.SPOT, HostState.RUNNING, 0, 0, 0, 0, -5,
                true, null)).hasMessageContaining("idleSince of host h");
    }

    @Test
    void limits_and_config() {
        assertThatThrownBy(() -> PoolLimits.of(3, 2, 10, 1)).hasMessageContaining("maxHosts 2 is below minHosts 3");
        assertThatThrownBy(() -> PoolLimits.of(0, 2, Double.NaN, 1)).hasMessageContaining("maxUsdPerHour");
        assertThatThrownBy(() -> PoolLimits.of(0, 2, 1, -1)).hasMessageContaining("maxLaunchesPerMinute");
        assertThatThrownBy(() -> new AutoscalerConfig(Duration.ZERO, 0.7, Duration.ofMinutes(1), Duration.ofSeconds(1)))
                .hasMessageContaining("idleTimeout");
        assertThatThrownBy(() -> new AutoscalerConfig(Duration.ofMinutes(1), 1.7, Duration.ofMinutes(1),
                Duration.ofSeconds(1))).hasMessageContaining("lowUtilizationThreshold");
        assertThat(AutoscalerConfig.defaults().idleTimeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(AutoscalerConfig.defaults().lowUtilizationThreshold()).isEqualTo(0.70);
    }
}
