package dev.gpucloud.metrics.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.metrics.exporter.DcgmGauges;
import dev.gpucloud.metrics.exporter.PlatformGauges;
import dev.gpucloud.metrics.exporter.PlatformMeters;
import dev.gpucloud.metrics.gpu.DropListener;
import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.gpu.GpuFleet;
import dev.gpucloud.metrics.gpu.SampleRules;
import dev.gpucloud.metrics.platform.PlatformState;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Several shards against the real broker, in one test: each is the service's own fleet, platform fold,
 * consumers and gauges on a registry of its own, fed by a Kafka consumer assigned the partitions its
 * {@link FleetShard} names (as the telemetry channel is), and reading the whole inventory (as every instance
 * does). Hosts are produced with a plain producer, so the partitioner that places them is Kafka's own.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class ShardedFleetFlowTest {

    private static final String SOURCE = "urn:gpucloud:test:metrics-service";
    private static final int HOSTS = 24;
    private static final int GPUS = 2;
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final Pattern HOSTNAME = Pattern.compile("Hostname=\"([^\"]+)\"");

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final String model = "A100-" + run;
    private final List<Shard> shards = new ArrayList<>();
    private TestKafka kafka;
    private Map<TopicPartition, Long> inventoryStart;
    private Map<TopicPartition, Long> telemetryStart;

    @BeforeEach
    void produceAFleet() {
        kafka = new TestKafka();
        inventoryStart = endOffsets(Topics.GPU_INVENTORY);
        telemetryStart = endOffsets(Topics.GPU_TELEMETRY);
        for (String host : hosts()) {
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, host, inventory(host), SOURCE));
        }
        for (String host : hosts()) {
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, host, sample(host, Instant.now()), SOURCE));
        }
    }

    @AfterEach
    void close() {
        shards.forEach(Shard::close);
        kafka.close();
    }

    @Test
    void two_shards_split_the_fleet_with_no_host_in_both_and_none_in_neither() {
        List<Shard> two = start(2);
        Set<String> first = two.get(0).exportedHosts();
        Set<String> second = two.get(1).exportedHosts();

        assertThat(first).doesNotContainAnyElementsOf(second);
        Set<String> union = new TreeSet<>(first);
        union.addAll(second);
        assertThat(union).containsExactlyInAnyOrderElementsOf(hosts());
        // each shard has exactly the hosts Kafka's partitioner sent to its partitions
        for (Shard shard : two) {
            assertThat(shard.exportedHosts()).allSatisfy(host ->
                    assertThat(TelemetryPartitions.of(host, Topics.GPU_TELEMETRY.partitions()) % 2).isEqualTo(shard.shard.index()));
        }
        // a skew this test cannot rule out, but 24 hosts in one shard would mean the split does nothing
        assertThat(first).isNotEmpty();
        assertThat(second).isNotEmpty();
    }

    @Test
    void the_per_host_platform_rows_add_up_across_shards_and_the_fleet_wide_ones_are_on_shard_0_only() {
        List<Shard> two = start(2);
        for (Shard shard : two) {
            // a shard's capacity is the GPUs of the hosts whose series it has
            assertThat(shard.capacity()).isEqualTo((double) shard.exportedHosts().size() * GPUS);
        }
        assertThat(two.get(0).capacity() + two.get(1).capacity()).isEqualTo((double) HOSTS * GPUS);

        assertThat(two.get(0).scrape()).contains("gpucloud_queue_wait_seconds_count", "gpucloud_metrics_jobs_refused");
        assertThat(two.get(1).scrape()).doesNotContain("gpucloud_queue_wait_seconds", "gpucloud_metrics_jobs_refused");
    }

    @Test
    void rescaled_from_two_shards_to_three_every_host_has_one_owner_and_the_moved_ones_their_new_one() {
        List<Shard> two = start(2);
        Map<String, Integer> ownerOfTwo = owners(two);
        two.forEach(Shard::close);
        shards.clear();

        // a new shard count is a restart of every instance: each rebuilds from the inventory and its partitions
        List<Shard> three = start(3);
        Map<String, Integer> ownerOfThree = owners(three);

        assertThat(ownerOfThree.keySet()).containsExactlyInAnyOrderElementsOf(hosts());
        int moved = 0;
        for (String host : hosts()) {
            int partition = TelemetryPartitions.of(host, Topics.GPU_TELEMETRY.partitions());
            assertThat(ownerOfTwo.get(host)).isEqualTo(partition % 2);
            assertThat(ownerOfThree.get(host)).isEqualTo(partition % 3);
            if (!ownerOfTwo.get(host).equals(ownerOfThree.get(host))) {
                moved++;
            }
        }
        assertThat(moved).as("hosts whose shard changed").isPositive();
        // nothing of the old shards is left: their registries are closed with them
        assertThat(two).allSatisfy(old -> assertThat(old.registry.isClosed()).isTrue());
    }

    @Test
    void a_tombstone_removes_the_host_from_its_own_shard_and_changes_nothing_on_the_other() {
        List<Shard> two = start(2);
        String leaving = hosts().get(0);
        int owner = TelemetryPartitions.of(leaving, Topics.GPU_TELEMETRY.partitions()) % 2;
        Set<String> otherBefore = two.get(1 - owner).exportedHosts();

        kafka.send(EventRecords.tombstone(Topics.GPU_INVENTORY, leaving, SOURCE));
        await().atMost(PATIENCE).untilAsserted(() -> {
            two.forEach(Shard::pump);
            assertThat(two.get(owner).exportedHosts()).doesNotContain(leaving);
        });
        assertThat(two.get(1 - owner).exportedHosts()).isEqualTo(otherBefore);
    }

    /** Starts {@code count} shards and waits until every host of this run is exported by one of them. */
    private List<Shard> start(int count) {
        List<Shard> started = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Shard shard = new Shard(new FleetShard(i, count, Topics.GPU_TELEMETRY.partitions()));
            shards.add(shard);
            started.add(shard);
        }
        // inventory first: a sample of a host no inventory describes is dropped (telemetry-requires-inventory)
        await().atMost(PATIENCE).untilAsserted(() -> {
            started.forEach(Shard::pumpInventory);
            assertThat(started).allSatisfy(s -> assertThat(hosts()).allMatch(s.fleet::isDescribed));
        });
        await().atMost(PATIENCE).untilAsserted(() -> {
            started.forEach(Shard::pump);
            Set<String> exported = new HashSet<>();
            started.forEach(s -> exported.addAll(s.exportedHosts()));
            assertThat(exported).containsAll(hosts());
        });
        return started;
    }

    private static Map<String, Integer> owners(List<Shard> shards) {
        Map<String, Integer> owner = new HashMap<>();
        for (Shard shard : shards) {
            for (String host : shard.exportedHosts()) {
                assertThat(owner.put(host, shard.shard.index())).as("host %s in two shards", host).isNull();
            }
        }
        return owner;
    }

    private List<String> hosts() {
        return IntStream.range(0, HOSTS).mapToObj(i -> "shard-" + run + "-" + i).toList();
    }

    private Map<TopicPartition, Long> endOffsets(Topic<?> topic) {
        try (KafkaConsumer<String, byte[]> consumer = consumer()) {
            List<TopicPartition> partitions = IntStream.range(0, topic.partitions())
                    .mapToObj(p -> new TopicPartition(topic.name(), p)).toList();
            return consumer.endOffsets(partitions);
        }
    }

    private static KafkaConsumer<String, byte[]> consumer() {
        return new KafkaConsumer<>(Map.<String, Object>of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer());
    }

    private HostInventory inventory(String host) {
        List<GpuDevice> gpus = IntStream.range(0, GPUS).mapToObj(i ->
                new GpuDevice(i, host + "-gpu-" + i, model, 40_960, "00000000:1" + i + ":00.0", 0, false, List.of()))
                .toList();
        return new HostInventory(host, host, "p4d.24xlarge", "us-east-1a", CapacityType.ON_DEMAND, 32_770_000,
                96_000, 1_152_000, "fabric-1", List.of("spine-1", "leaf-1"), gpus, List.of(), "simulated", Instant.now());
    }

    private TelemetrySample sample(String host, Instant at) {
        List<GpuReading> readings = IntStream.range(0, GPUS).mapToObj(i -> new GpuReading(i, host + "-gpu-" + i, model,
                "00000000:1" + i + ":00.0", 87.0, 31.0, 30_720, 10_240, 312.5, 123_456_789L, 64, 70, 1410, 1215,
                0L, 0L, null, 0L, 0.8, 0.6, 0.4, List.of())).toList();
        return new TelemetrySample(host, host, at, readings);
    }

    /** One metrics-service shard, wired as the service wires it, with its own Kafka consumers. */
    private final class Shard implements AutoCloseable {
        final FleetShard shard;
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final GpuFleet fleet;
        final PlatformGauges gauges;
        final TelemetryConsumer telemetry;
        final InventoryConsumer inventory;
        final KafkaConsumer<String, byte[]> telemetryIn = consumer();
        final KafkaConsumer<String, byte[]> inventoryIn = consumer();

        Shard(FleetShard shard) {
            this.shard = shard;
            fleet = new GpuFleet(new DcgmGauges(registry), DropListener.NONE, 64, 20_000,
                    new SampleRules(Duration.ofMinutes(5), Duration.ofMinutes(10), true));
            PlatformState platform = new PlatformState(new PlatformMeters(registry, shard.exportsFleetWideSeries()),
                    Instant.now(), 1_000, PlatformState.AdvisorSettings.defaults(), TelemetryPartitions.hostsOf(shard));
            gauges = new PlatformGauges(platform, fleet, registry, shard);
            telemetry = new TelemetryConsumer(fleet, platform);
            inventory = new InventoryConsumer(fleet, platform);
            List<TopicPartition> owned = shard.ownedPartitions().stream()
                    .map(p -> new TopicPartition(Topics.GPU_TELEMETRY.name(), p)).toList();
            telemetryIn.assign(owned);
            owned.forEach(tp -> telemetryIn.seek(tp, telemetryStart.get(tp)));
            inventoryIn.assign(inventoryStart.keySet());
            inventoryStart.forEach(inventoryIn::seek);
        }

        void pumpInventory() {
            for (ConsumerRecord<String, byte[]> record : inventoryIn.poll(Duration.ofMillis(200))) {
                apply(() -> inventory.consume(record));
            }
        }

        void pump() {
            pumpInventory();
            for (ConsumerRecord<String, byte[]> record : telemetryIn.poll(Duration.ofMillis(200))) {
                apply(() -> telemetry.consume(record));
            }
            gauges.refresh();
        }

        /** The shared broker carries other tests' bad records too: those are the dead-letter path's, not ours. */
        private void apply(Runnable consume) {
            try {
                consume.run();
            } catch (MalformedEventException e) {
                // dead-lettered by the service; nothing to export
            }
        }

        String scrape() {
            return registry.scrape();
        }

        Set<String> exportedHosts() {
            Set<String> hosts = new TreeSet<>();
            scrape().lines().filter(l -> l.startsWith("DCGM_FI_DEV_GPU_UTIL{") && l.contains(run)).forEach(l -> {
                Matcher m = HOSTNAME.matcher(l);
                if (m.find()) {
                    hosts.add(m.group(1));
                }
            });
            return hosts;
        }

        double capacity() {
            return scrape().lines().filter(l -> l.startsWith("gpucloud_gpus_capacity{") && l.contains(model))
                    .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
        }

        @Override
        public void close() {
            telemetryIn.close();
            inventoryIn.close();
            registry.close();
        }
    }
}
