package dev.gpucloud.metrics.exporter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.MigReading;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.metrics.gpu.GpuFleet;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The mapping to Prometheus text, on the registry Quarkus uses (Micrometer's Prometheus simpleclient
 * registry) with its default naming convention: names and labels must come out exactly as
 * dcgm-exporter writes them.
 */
class DcgmGaugesTest {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final DcgmGauges gauges = new DcgmGauges(registry);
    private final GpuFleet fleet = new GpuFleet(gauges, 8, 100);

    private static GpuReading reading(double util, Integer temperature) {
        return new GpuReading(0, "GPU-5fb4b8a6-1f3c-4f1e-9d1c-3a2b1c0d9e8f", "A100-SXM4-40GB", "00000000:10:1C.0",
                util, 3.0, 2048, 38_912, 61.25, 123_456_789L, temperature, null, 1410, 1215,
                null, null, null, null, null, null, null, List.of());
    }

    @Test
    void series_read_exactly_as_dcgm_exporter_writes_them() {
        fleet.apply(new TelemetrySample("node-1", "a100-1", Instant.parse("2025-01-01T00:00:00Z"),
                List.of(reading(87.0, 41))), Instant.now());

        String labels = "{GPU_I_ID=\"\",GPU_I_PROFILE=\"\",Hostname=\"a100-1\","
                + "UUID=\"GPU-5fb4b8a6-1f3c-4f1e-9d1c-3a2b1c0d9e8f\",device=\"nvidia0\","
                + "gpu=\"0\",hostname=\"a100-1\",modelName=\"A100-SXM4-40GB\","
                + "pci_bus_id=\"00000000:10:1C.0\",}";
        assertThat(registry.scrape().lines()).contains(
                "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
                "# TYPE DCGM_FI_DEV_GPU_UTIL gauge",
                "DCGM_FI_DEV_GPU_UTIL" + labels + " 87.0",
                "DCGM_FI_DEV_MEM_COPY_UTIL" + labels + " 3.0",
                "DCGM_FI_DEV_FB_USED" + labels + " 2048.0",
                "DCGM_FI_DEV_FB_FREE" + labels + " 38912.0",
                "DCGM_FI_DEV_POWER_USAGE" + labels + " 61.25",
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + " 1.23456789E8",
                "DCGM_FI_DEV_GPU_TEMP" + labels + " 41.0",
                "DCGM_FI_DEV_SM_CLOCK" + labels + " 1410.0",
                "DCGM_FI_DEV_MEM_CLOCK" + labels + " 1215.0");
    }

    @Test
    void a_new_value_is_read_at_scrape_time_and_a_dropped_reading_loses_its_series() {
        fleet.apply(new TelemetrySample("node-1", "a100-1", Instant.parse("2025-01-01T00:00:00Z"),
                List.of(reading(87.0, 41))), Instant.now());
        fleet.apply(new TelemetrySample("node-1", "a100-1", Instant.parse("2025-01-01T00:00:01Z"),
                List.of(reading(12.0, null))), Instant.now());

        String scrape = registry.scrape();
        assertThat(scrape).contains("DCGM_FI_DEV_GPU_UTIL{").contains("} 12.0").doesNotContain("DCGM_FI_DEV_GPU_TEMP");
        assertThat(gauges.seriesCount()).isEqualTo(8);
    }

    @Test
    void a_departed_host_leaves_nothing_in_the_scrape() {
        fleet.apply(new TelemetrySample("node-1", "a100-1", Instant.parse("2025-01-01T00:00:00Z"),
                List.of(reading(87.0, 41))), Instant.now());

        fleet.leave("node-1", Instant.parse("2025-01-01T00:00:05Z"), Instant.now());

        assertThat(registry.scrape()).doesNotContain("DCGM_");
        assertThat(gauges.seriesCount()).isZero();
    }

    @Test
    void a_mig_instance_has_its_own_series_labelled_with_its_profile_and_instance_id() {
        GpuReading mig = new GpuReading(0, "GPU-h100", "H100-SXM5-80GB", "00000000:1B:00.0", 40.0, null, 30_000,
                51_920, null, null, null, null, null, null, null, null, null, null, 0.6, null, null,
                List.of(new MigReading(1, "1g.10gb", "MIG-aaaa", 4_000, 0.25),
                        new MigReading(2, "3g.40gb", "MIG-bbbb", 20_000, null)));
        fleet.apply(new TelemetrySample("node-2", "h100-1", Instant.parse("2025-01-01T00:00:00Z"), List.of(mig)),
                Instant.now());

        String gpu = "Hostname=\"h100-1\",UUID=\"GPU-h100\",device=\"nvidia0\",gpu=\"0\",hostname=\"h100-1\","
                + "modelName=\"H100-SXM5-80GB\",pci_bus_id=\"00000000:1B:00.0\",}";
        assertThat(registry.scrape().lines()).contains(
                "DCGM_FI_DEV_FB_USED{GPU_I_ID=\"\",GPU_I_PROFILE=\"\"," + gpu + " 30000.0",
                "DCGM_FI_DEV_FB_USED{GPU_I_ID=\"1\",GPU_I_PROFILE=\"1g.10gb\"," + gpu + " 4000.0",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE{GPU_I_ID=\"1\",GPU_I_PROFILE=\"1g.10gb\"," + gpu + " 0.25",
                "DCGM_FI_DEV_FB_USED{GPU_I_ID=\"2\",GPU_I_PROFILE=\"3g.40gb\"," + gpu + " 20000.0");
        // A MIG instance has only the framebuffer and the graphics engine, as in dcgm-exporter.
        assertThat(registry.scrape().lines().filter(l -> l.contains("GPU_I_ID=\"2\""))).hasSize(1);
    }
}
