package dev.gpucloud.metrics.bench;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.metrics.exporter.DcgmGauges;
import dev.gpucloud.metrics.exporter.TelemetryDrops;
import dev.gpucloud.metrics.gpu.GpuFleet;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Prints what a scrape of a large fleet costs: registers N GPUs (hosts of 8, every reading present,
 * so 15 series per GPU) on the same Micrometer Prometheus registry the service uses, then times the
 * registry's scrape in both formats Prometheus asks for, and one steady round of samples. Not a test:
 * it asserts nothing and prints figures. Run (after {@code ./mvnw -o -pl metrics-service test-compile}):
 * <pre>
 *   ./mvnw -B -o -q -pl metrics-service dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 *   java -Xmx2g -cp metrics-service/target/test-classes:metrics-service/target/classes:$(cat metrics-service/target/cp.txt) \
 *     dev.gpucloud.metrics.bench.ScrapeBenchmark 10000
 * </pre>
 */
public final class ScrapeBenchmark {

    private static final int GPUS_PER_HOST = 8;
    private static final String OPEN_METRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    private ScrapeBenchmark() {
    }

    public static void main(String[] args) {
        int gpus = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int hosts = (gpus + GPUS_PER_HOST - 1) / GPUS_PER_HOST;

        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        DcgmGauges gauges = new DcgmGauges(registry);
        GpuFleet fleet = new GpuFleet(gauges, new TelemetryDrops(registry), 64, gpus + GPUS_PER_HOST);
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");

        long heapBefore = usedHeapAfterGc();
        long start = System.nanoTime();
        for (int h = 0; h < hosts; h++) {
            fleet.apply(sample(h, t0, 50.0), t0);
        }
        long registerNanos = System.nanoTime() - start;
        long heapAfter = usedHeapAfterGc();

        long steadyStart = System.nanoTime();
        for (int h = 0; h < hosts; h++) {
            fleet.apply(sample(h, t0.plusSeconds(1), 60.0), t0);
        }
        long steadyNanos = System.nanoTime() - steadyStart;

        double[] textMillis = new double[rounds];
        double[] openMillis = new double[rounds];
        int textBytes = 0;
        int openBytes = 0;
        for (int i = 0; i < rounds; i++) {
            long s = System.nanoTime();
            String text = registry.scrape();
            textMillis[i] = (System.nanoTime() - s) / 1e6;
            textBytes = text.getBytes(StandardCharsets.UTF_8).length;
            s = System.nanoTime();
            String open = registry.scrape(OPEN_METRICS);
            openMillis[i] = (System.nanoTime() - s) / 1e6;
            openBytes = open.getBytes(StandardCharsets.UTF_8).length;
        }

        System.out.printf("fleet: %d GPUs on %d hosts, %d dcgm series%n", fleet.gpuCount(), hosts, gauges.seriesCount());
        System.out.printf("register every series once: %.0f ms; heap for them: %.0f MiB%n", registerNanos / 1e6,
                (heapAfter - heapBefore) / 1048576.0);
        System.out.printf("steady samples (values only): %.1f us per host sample%n", steadyNanos / 1e3 / hosts);
        System.out.printf("scrape text 0.0.4: %.1f MiB, median %.0f ms, min %.0f ms (%d rounds, first %.0f ms)%n",
                textBytes / 1048576.0, median(textMillis), min(textMillis), rounds, textMillis[0]);
        System.out.printf("scrape OpenMetrics: %.1f MiB, median %.0f ms, min %.0f ms%n", openBytes / 1048576.0,
                median(openMillis), min(openMillis));
    }

    private static TelemetrySample sample(int host, Instant at, double util) {
        String node = "bench-" + host;
        List<GpuReading> readings = new ArrayList<>(GPUS_PER_HOST);
        for (int i = 0; i < GPUS_PER_HOST; i++) {
            readings.add(new GpuReading(i, "GPU-" + node + "-" + i, "H100-SXM5-80GB", String.format("00000000:%02X:00.0", i),
                    util, 20.0, 40_000, 41_000, 450.0, 1_000_000_000L, 60, 70, 1980, 2619,
                    0L, 0L, 0, 0L, 0.5, 0.3, 0.4, List.of()));
        }
        return new TelemetrySample(node, node + ".bench", at, readings);
    }

    private static long usedHeapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static double min(double[] values) {
        return Arrays.stream(values).min().orElse(0);
    }
}
