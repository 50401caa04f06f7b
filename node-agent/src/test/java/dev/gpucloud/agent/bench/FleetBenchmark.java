package dev.gpucloud.agent.bench;

import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.agent.sim.SimulatedHost;
import dev.gpucloud.agent.sim.SimulationSettings;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * How many simulated hosts one core carries, and how many telemetry bytes a host sends. Builds a
 * fleet of N hosts in this JVM (default 10,000: a quarter each of a100x8, h100x8, a10g, v100-spot),
 * keeps half the GPUs busy, then times rounds of sampling every host and encoding each sample as
 * the Kafka record the agent sends (JSON and CloudEvents headers; the producer's own work is not
 * included). Not a test: run it with the command in docs/benchmarks.md.
 */
public final class FleetBenchmark {

    public static void main(String[] args) {
        int hosts = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int quarter = hosts / 4;
        String spec = "a100x8:" + quarter + ",h100x8:" + quarter + ",a10g:" + quarter + ",v100-spot:" + (hosts - 3 * quarter);
        long built = System.nanoTime();
        SimulatedFleet fleet = new SimulatedFleet(new SimulationSettings(spec, "bench", "local-1a", 42,
                Duration.ofSeconds(10), Duration.ofHours(1), Duration.ofSeconds(2)), Clock.systemUTC());
        System.out.printf("fleet of %d hosts built in %d ms%n", fleet.hosts().size(), (System.nanoTime() - built) / 1_000_000);
        long started = System.nanoTime();
        int n = 0;
        for (SimulatedHost host : fleet.hosts()) {
            int gpus = host.gpus().size();
            List<Integer> busy = gpus == 1 ? (n % 2 == 0 ? List.of(0) : List.of())
                    : java.util.stream.IntStream.range(0, gpus / 2).boxed().toList();
            if (!busy.isEmpty()) {
                fleet.handle(new NodeCommand("c-" + n, NodeCommandType.START, host.nodeId(), "a-" + n, "j-" + n, "acme",
                        busy, null, 0, 0, 1, null, List.of("sleep", "3600"), Map.of(), null, null, null, Instant.now()));
            }
            n++;
        }
        System.out.printf("%d allocations started (%s) in %d ms%n", fleet.running().size(), spec,
                (System.nanoTime() - started) / 1_000_000);

        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long bytes = 0;
        long records = 0;
        Map<String, long[]> perProfile = new java.util.TreeMap<>();
        long cpuTotal = 0;
        for (int round = 0; round < rounds; round++) {
            long cpu0 = threads.getCurrentThreadCpuTime();
            List<TelemetrySample> samples = fleet.sample();
            long roundBytes = 0;
            for (TelemetrySample sample : samples) {
                ProducerRecord<String, byte[]> record = EventRecords.record(Topics.GPU_TELEMETRY, sample.nodeId(), sample,
                        "/node-agent/" + sample.nodeId());
                long size = size(record);
                roundBytes += size;
                if (round == rounds - 1) {
                    String profile = sample.nodeId().replaceAll("^bench-|-\\d+$", "");
                    long[] acc = perProfile.computeIfAbsent(profile, k -> new long[2]);
                    acc[0] += size;
                    acc[1]++;
                }
            }
            fleet.advance();
            long cpu = threads.getCurrentThreadCpuTime() - cpu0;
            if (round >= rounds / 2) { // the second half, once the JIT has settled
                cpuTotal += cpu;
                bytes += roundBytes;
                records += samples.size();
            }
        }
        int measured = rounds - rounds / 2;
        double cpuPerRoundMs = cpuTotal / 1e6 / measured;
        double perHostMicros = cpuTotal / 1e3 / records;
        System.out.printf("sampling + encoding all %d hosts: %.1f ms CPU per round (%.1f us per host)%n",
                fleet.hosts().size(), cpuPerRoundMs, perHostMicros);
        System.out.printf("hosts one core carries: %,.0f at a 5 s telemetry interval, %,.0f at 1 s%n",
                5e6 / perHostMicros, 1e6 / perHostMicros);
        System.out.printf("telemetry record, average over the fleet: %.0f bytes (value + key + headers)%n",
                (double) bytes / records);
        perProfile.forEach((profile, acc) -> System.out.printf(
                "  %-10s %5.0f bytes a record: %,7.0f bytes per host per minute at 5 s, %,8.0f at 1 Hz%n", profile,
                (double) acc[0] / acc[1], 12.0 * acc[0] / acc[1], 60.0 * acc[0] / acc[1]));
        Runtime rt = Runtime.getRuntime();
        System.gc();
        System.out.printf("heap in use after GC with %d hosts: %.1f MiB%n", fleet.hosts().size(),
                (rt.totalMemory() - rt.freeMemory()) / 1048576.0);
    }

    private static long size(ProducerRecord<String, byte[]> record) {
        long size = record.value().length + record.key().length();
        for (Header header : record.headers()) {
            size += header.key().length() + header.value().length;
        }
        return size;
    }
}
