package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Builders that keep the cases short: an A100 host with everything measured unless a case says otherwise. */
final class Fixtures {

    static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    private Fixtures() {
    }

    static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static String uuid(String host, int index) {
        return "GPU-" + host + "-" + index;
    }

    static GpuReading mkReading(String host, int index, double util) {
        return new GpuReading(index, uuid(host, index), "A100-SXM4-40GB", "00000000:0" + index + ":00.0",
                util, 12.5, 1024, 39_936, 250.5, 9_000_000L, 55, 60, 1410, 1215,
                0L, 0L, 0, 0L, 0.5, 0.25, 0.125, List.of());
    }

    /** A reading where the backend could take only what GpuReading requires. */
    static GpuReading mkBareReading(String host, int index, double util) {
        return new GpuReading(index, uuid(host, index), "A100-SXM4-40GB", null,
                util, null, 1024, 39_936, null, null, null, null, null, null,
                null, null, null, null, null, null, null, List.of());
    }

    static TelemetrySample mkSample(String host, Instant at, GpuReading... readings) {
        return new TelemetrySample(host, host + ".example", at, List.of(readings));
    }

    static TelemetrySample mkSample(String host, Instant at, int gpus, double util) {
        List<GpuReading> readings = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            readings.add(mkReading(host, i, util));
        }
        return new TelemetrySample(host, host + ".example", at, readings);
    }

    static HostInventory mkInventory(String host, int gpus) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, uuid(host, i), "A100-SXM4-40GB", 40_960, "00000000:1" + i + ":00.0", 0,
                    false, List.of()));
        }
        return new HostInventory(host, host + ".example", "p4d.24xlarge", "us-east-1a", CapacityType.ON_DEMAND,
                32_770_000, 96_000, 1_152_000, "fabric-1", List.of("spine-1", "leaf-1"), devices, List.of(),
                "simulated", T0);
    }

    /** Records the series that exist, as "NAME{uuid}", the way an exporter would see them. */
    static final class RecordingListener implements SeriesListener {
        final java.util.Set<String> series = new java.util.TreeSet<>();
        int added;
        int removed;

        @Override
        public void seriesAdded(GpuSeries gpu, GpuField field) {
            if (!series.add(key(gpu, field))) {
                throw new AssertionError("added twice: " + key(gpu, field));
            }
            added++;
        }

        @Override
        public void seriesRemoved(GpuSeries gpu, GpuField field) {
            if (!series.remove(key(gpu, field))) {
                throw new AssertionError("removed but never added: " + key(gpu, field));
            }
            removed++;
        }

        long countFor(String host) {
            return series.stream().filter(s -> s.contains("GPU-" + host + "-")).count();
        }

        static String key(GpuSeries gpu, GpuField field) {
            String mig = gpu.labels().isMigInstance() ? "/" + gpu.labels().migInstanceId() : "";
            return field.metricName() + "{" + gpu.labels().uuid() + mig + "}";
        }
    }
}
