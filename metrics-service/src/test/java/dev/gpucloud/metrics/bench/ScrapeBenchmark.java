package dev.gpucloud.metrics.bench;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.metrics.exporter.DcgmGauges;
import dev.gpucloud.metrics.exporter.TelemetryDrops;
import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.gpu.GpuFleet;
import dev.gpucloud.metrics.messaging.TelemetryPartitions;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Prints what a scrape of a large fleet costs: registers N GPUs (hosts of 8, every reading present,
 * so 15 series per GPU, named and labelled as the simulated agent names them) on the same Micrometer
 * Prometheus registry the service uses, then times the registry's scrape in both formats Prometheus asks
 * for, and one steady round of samples. With a shard count, each shard gets a registry and fleet of its
 * own and the hosts that Kafka's partitioner sends to its gpu.telemetry partitions, as the service shards
 * them; every shard's scrape is measured and the largest named. Last, where the bytes of one scrape go.
 * Not a test: it asserts nothing and prints figures. Run (after {@code ./mvnw -o -pl metrics-service test-compile}):
 * <pre>
 *   ./mvnw -B -o -q -pl metrics-service dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 *   java -Xmx2g -cp metrics-service/target/test-classes:metrics-service/target/classes:$(cat metrics-service/target/cp.txt) \
 *     dev.gpucloud.metrics.bench.ScrapeBenchmark 10000 10 6
 * </pre>
 * Arguments: GPUs (10,000), scrape rounds (10), shards (1).
 */
public final class ScrapeBenchmark {

    private static final int GPUS_PER_HOST = 8;
    private static final String OPEN_METRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    private ScrapeBenchmark() {
    }

    public static void main(String[] args) {
        int gpus = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int shardCount = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        int hosts = (gpus + GPUS_PER_HOST - 1) / GPUS_PER_HOST;
        int partitions = Topics.GPU_TELEMETRY.partitions();

        List<Shard> shards = new ArrayList<>();
        for (int i = 0; i < shardCount; i++) {
            shards.add(new Shard(new FleetShard(i, shardCount, partitions), gpus + GPUS_PER_HOST));
        }
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
        List<TelemetrySample> first = new ArrayList<>(hosts);
        List<TelemetrySample> second = new ArrayList<>(hosts);
        for (int h = 0; h < hosts; h++) {
            first.add(sample(h, t0, 50.0));
            second.add(sample(h, t0.plusSeconds(1), 60.0));
        }

        long heapBefore = usedHeapAfterGc();
        long start = System.nanoTime();
        for (TelemetrySample sample : first) {
            shardOf(shards, sample.nodeId(), partitions).fleet.apply(sample, t0);
        }
        long registerNanos = System.nanoTime() - start;
        long heapAfter = usedHeapAfterGc();

        long steadyStart = System.nanoTime();
        for (TelemetrySample sample : second) {
            shardOf(shards, sample.nodeId(), partitions).fleet.apply(sample, t0);
        }
        long steadyNanos = System.nanoTime() - steadyStart;

        int allSeries = shards.stream().mapToInt(s -> s.gauges.seriesCount()).sum();
        int allGpus = shards.stream().mapToInt(s -> s.fleet.gpuCount()).sum();
        System.out.printf("fleet: %d GPUs on %d hosts, %d dcgm series, %d shard(s) of %d gpu.telemetry partitions%n",
                allGpus, hosts, allSeries, shardCount, partitions);
        System.out.printf("register every series once: %.0f ms; heap for them: %.0f MiB%n", registerNanos / 1e6,
                (heapAfter - heapBefore) / 1048576.0);
        System.out.printf("steady samples (values only): %.1f us per host sample%n", steadyNanos / 1e3 / hosts);

        Shard largest = null;
        String largestText = "";
        for (Shard shard : shards) {
            double[] textMillis = new double[rounds];
            double[] openMillis = new double[rounds];
            String text = "";
            int openBytes = 0;
            for (int i = 0; i < rounds; i++) {
                long s = System.nanoTime();
                text = shard.registry.scrape();
                textMillis[i] = (System.nanoTime() - s) / 1e6;
                s = System.nanoTime();
                openBytes = shard.registry.scrape(OPEN_METRICS).getBytes(StandardCharsets.UTF_8).length;
                openMillis[i] = (System.nanoTime() - s) / 1e6;
            }
            int textBytes = text.getBytes(StandardCharsets.UTF_8).length;
            System.out.printf("%s: %d GPUs, %d series; text 0.0.4 %.2f MiB (%d bytes), median %.0f ms, min %.0f ms, "
                    + "first %.0f ms; OpenMetrics %.2f MiB, median %.0f ms, min %.0f ms%n",
                    shard.shard, shard.fleet.gpuCount(), shard.gauges.seriesCount(), textBytes / 1048576.0, textBytes,
                    median(textMillis), min(textMillis), textMillis[0], openBytes / 1048576.0, median(openMillis),
                    min(openMillis));
            if (largest == null || text.length() > largestText.length()) {
                largest = shard;
                largestText = text;
            }
        }
        System.out.printf("largest scrape: %s, %.2f MiB, %d series (%.0f bytes per GPU)%n", largest.shard,
                largestText.getBytes(StandardCharsets.UTF_8).length / 1048576.0, largest.gauges.seriesCount(),
                largestText.length() / (double) Math.max(1, largest.fleet.gpuCount()));
        printBreakdown(largestText);
    }

    /** Where the bytes of a text scrape go: HELP/TYPE lines, metric names, each label, values. */
    private static void printBreakdown(String text) {
        long total = text.length() + 0L;
        long comments = 0;
        long names = 0;
        long values = 0;
        Map<String, Long> labels = new TreeMap<>();
        Map<String, Long> byMetric = new TreeMap<>();
        for (String line : text.split("\n")) {
            long size = line.length() + 1;
            if (line.startsWith("#")) {
                comments += size;
                continue;
            }
            int brace = line.indexOf('{');
            int close = line.lastIndexOf('}');
            String name = brace < 0 ? line.substring(0, line.indexOf(' ')) : line.substring(0, brace);
            byMetric.merge(name, size, Long::sum);
            names += name.length();
            values += line.length() - (close < 0 ? name.length() : close + 1) + 1;
            if (brace >= 0) {
                labels.merge("{ }", 2L, Long::sum);
                for (String pair : line.substring(brace + 1, close).split(",(?=[A-Za-z_]+=\")")) {
                    if (!pair.isEmpty()) {
                        labels.merge(pair.substring(0, pair.indexOf('=')), pair.length() + 1L, Long::sum);
                    }
                }
            }
        }
        System.out.printf("bytes of the largest scrape (text): %d; HELP/TYPE %.1f%%, metric names %.1f%%, values %.1f%%%n",
                total, 100.0 * comments / total, 100.0 * names / total, 100.0 * values / total);
        labels.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).forEach(e ->
                System.out.printf("  label %-14s %5.1f%%%n", e.getKey(), 100.0 * e.getValue() / total));
        byMetric.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(15).forEach(e ->
                System.out.printf("  series %-40s %5.1f%%%n", e.getKey(), 100.0 * e.getValue() / total));
    }

    private static Shard shardOf(List<Shard> shards, String nodeId, int partitions) {
        return shards.get(TelemetryPartitions.of(nodeId, partitions) % shards.size());
    }

    /** A host as the simulated agent names it: {@code sim-a100x8-N}, GPU UUIDs {@code GPU-<uuid>}. */
    private static TelemetrySample sample(int host, Instant at, double util) {
        String node = "sim-a100x8-" + host;
        List<GpuReading> readings = new ArrayList<>(GPUS_PER_HOST);
        for (int i = 0; i < GPUS_PER_HOST; i++) {
            String uuid = "GPU-" + UUID.nameUUIDFromBytes(("gpucloud-sim/" + node + "/gpu/" + i).getBytes(StandardCharsets.UTF_8));
            readings.add(new GpuReading(i, uuid, "A100-SXM4-40GB", String.format("00000000:%02X:00.0", 0x10 + 0x10 * i),
                    util, 20.0, 30_000, 10_960, 350.0, 1_000_000_000L, 60, 70, 1410, 1215,
                    0L, 0L, 0, 0L, 0.5, 0.3, 0.4, List.of()));
        }
        return new TelemetrySample(node, node, at, readings);
    }

    /** One shard's registry and fleet, as the service makes them. */
    private static final class Shard {
        final FleetShard shard;
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final DcgmGauges gauges = new DcgmGauges(registry);
        final GpuFleet fleet;

        Shard(FleetShard shard, int maxGpus) {
            this.shard = shard;
            this.fleet = new GpuFleet(gauges, new TelemetryDrops(registry), 64, maxGpus);
        }
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
