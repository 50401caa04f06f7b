package dev.gpucloud.metrics.messaging;

import static dev.gpucloud.testsupport.RawRecords.withValue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The service against the real broker: records produced with a plain KafkaProducer, series read back
 * from /q/metrics, rejected records read back from the dead-letter topics. The broker is shared, so
 * every node id is unique to this run and no topic is assumed empty.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class MetricsFlowTest {

    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static final String SOURCE = "urn:gpucloud:test:metrics-service";
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private TestKafka kafka;

    @BeforeEach
    void connect() {
        kafka = new TestKafka();
    }

    @AfterEach
    void close() {
        kafka.close();
    }

    @Test
    void inventory_and_telemetry_become_series_named_and_labelled_as_dcgm_exporter() {
        String node = node("a100");
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node), SOURCE));

        // A whole GPU has empty MIG labels (Prometheus drops an empty label: the same series as dcgm-exporter's).
        String labels = "{GPU_I_ID=\"\",GPU_I_PROFILE=\"\",Hostname=\"" + node + "\",UUID=\"" + gpuUuid(node, 0)
                + "\",device=\"nvidia0\",gpu=\"0\",hostname=\"" + node + "\","
                + "modelName=\"A100-SXM4-40GB\",pci_bus_id=\"00000000:10:1C.0\",}";
        List<String> expected = List.of(
                "DCGM_FI_DEV_GPU_UTIL" + labels + " 87.0",
                "DCGM_FI_DEV_MEM_COPY_UTIL" + labels + " 31.0",
                "DCGM_FI_DEV_FB_USED" + labels + " 30720.0",
                "DCGM_FI_DEV_FB_FREE" + labels + " 10240.0",
                "DCGM_FI_DEV_POWER_USAGE" + labels + " 312.5",
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + " 1.23456789E8",
                "DCGM_FI_DEV_GPU_TEMP" + labels + " 64.0",
                "DCGM_FI_DEV_SM_CLOCK" + labels + " 1410.0",
                "DCGM_FI_DEV_MEM_CLOCK" + labels + " 1215.0");
        awaitSeries(node, () -> assertThat(scrape().lines()).containsAll(expected));

        // GPU 1 reports only what GpuReading requires, and has no PCI id anywhere: three series.
        String bare = scrape().lines().filter(l -> l.contains(gpuUuid(node, 1))).sorted().toList().toString();
        assertThat(scrape().lines().filter(l -> l.contains(gpuUuid(node, 1))))
                .as(bare).hasSize(3)
                .allMatch(l -> l.startsWith("DCGM_FI_DEV_GPU_UTIL{") || l.startsWith("DCGM_FI_DEV_FB_USED{")
                        || l.startsWith("DCGM_FI_DEV_FB_FREE{"))
                .allMatch(l -> l.contains("pci_bus_id=\"\""));
        assertThat(scrape()).contains("# TYPE DCGM_FI_DEV_GPU_UTIL gauge",
                "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).");
        // Prometheus asks for OpenMetrics first: same names and labels, without the trailing comma.
        String openMetrics = given().accept("application/openmetrics-text; version=1.0.0; charset=utf-8")
                .when().get("/q/metrics").then().statusCode(200).extract().asString();
        assertThat(openMetrics.lines()).contains("DCGM_FI_DEV_GPU_UTIL{GPU_I_ID=\"\",GPU_I_PROFILE=\"\",Hostname=\"" + node
                + "\",UUID=\"" + gpuUuid(node, 0) + "\",device=\"nvidia0\",gpu=\"0\",hostname=\"" + node
                + "\",modelName=\"A100-SXM4-40GB\",pci_bus_id=\"00000000:10:1C.0\"} 87.0");
    }

    @Test
    void a_tombstone_removes_every_series_of_the_host() {
        String leaving = node("leaving");
        String staying = node("staying");
        awaitSeries(leaving, () -> assertThat(scrape()).contains(gpuUuid(leaving, 0)));
        awaitSeries(staying, () -> assertThat(scrape()).contains(gpuUuid(staying, 0)));

        kafka.send(EventRecords.tombstone(Topics.GPU_INVENTORY, leaving, SOURCE));

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(scrape()).doesNotContain(leaving));
        assertThat(scrape()).contains(gpuUuid(staying, 0));
    }

    @Test
    void bad_telemetry_is_dead_lettered_with_its_reason_and_the_consumer_goes_on() {
        String canary = node("canary");
        awaitSeries(canary, () -> assertThat(scrape()).contains(gpuUuid(canary, 0)));
        TopicTail deadLetters = kafka.deadLetters(Topics.GPU_TELEMETRY);

        String malformed = node("t-malformed");
        String missingField = node("t-missing");
        String noHeaders = node("t-noheaders");
        String wrongKey = node("t-wrongkey");
        kafka.send(withValue(EventRecords.record(Topics.GPU_TELEMETRY, malformed, sample(malformed, Instant.now()), SOURCE),
                "{\"nodeId\": \"" + malformed + "\", \"gpus\": ["));
        kafka.send(withValue(EventRecords.record(Topics.GPU_TELEMETRY, missingField, sample(missingField, Instant.now()), SOURCE),
                without(sample(missingField, Instant.now()), "hostname")));
        kafka.send(new ProducerRecord<>(Topics.GPU_TELEMETRY.name(), noHeaders,
                EventCodec.encode(sample(noHeaders, Instant.now()))));
        kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, wrongKey, sample(node("someone-else"), Instant.now()), SOURCE));

        Map<String, ConsumerRecord<String, byte[]>> dead = byKey(deadLetters,
                Set.of(malformed, missingField, noHeaders, wrongKey));

        assertThat(dead).containsOnlyKeys(malformed, missingField, noHeaders, wrongKey);
        assertThat(reason(dead, malformed)).startsWith("gpu.telemetry: Unexpected end-of-input");
        assertThat(reason(dead, missingField)).isEqualTo("gpu.telemetry: missing required field 'hostname'");
        assertThat(reason(dead, noHeaders)).isEqualTo("gpu.telemetry: missing required header 'ce_id'");
        assertThat(reason(dead, wrongKey)).isEqualTo("gpu.telemetry: key '" + wrongKey
                + "' differs from field 'nodeId' '" + node("someone-else") + "'");
        assertThat(scrape()).doesNotContain(missingField).doesNotContain(noHeaders).doesNotContain(wrongKey);

        String after = node("after-bad-telemetry");
        awaitSeries(after, () -> assertThat(scrape()).contains(gpuUuid(after, 0)));
    }

    @Test
    void implausible_readings_and_unknown_gpus_are_dropped_and_counted_and_nan_is_dead_lettered() {
        String node = node("hostile");
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node), SOURCE));
        // GPU 0 reports a negative power draw and a 9,999 C temperature; GPU 7 is in no inventory.
        GpuReading absurd = new GpuReading(0, gpuUuid(node, 0), "A100-SXM4-40GB", "00000000:10:1C.0",
                50.0, null, 1_024, 39_936, -5.0, null, 9_999, null, null, null,
                null, null, null, null, null, null, null, List.of());
        GpuReading unknown = new GpuReading(7, "GPU-" + node + "-made-up", "A100-SXM4-40GB", null,
                50.0, null, 1, 1, null, null, null, null, null, null, null, null, null, null, null, null, null,
                List.of());
        double implausibleBefore = counter("implausible_value", "DCGM_FI_DEV_GPU_TEMP");
        double unknownBefore = counter("unknown_gpu", "gpu");

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node,
                    new TelemetrySample(node, node, Instant.now(), List.of(absurd, unknown)), SOURCE));
            assertThat(scrape()).contains("DCGM_FI_DEV_GPU_UTIL{GPU_I_ID=\"\",GPU_I_PROFILE=\"\",Hostname=\"" + node);
            assertThat(counter("implausible_value", "DCGM_FI_DEV_GPU_TEMP")).isGreaterThan(implausibleBefore);
            assertThat(counter("implausible_value", "DCGM_FI_DEV_POWER_USAGE")).isGreaterThan(0);
            assertThat(counter("unknown_gpu", "gpu")).isGreaterThan(unknownBefore);
        });
        assertThat(scrape().lines().filter(l -> l.contains(gpuUuid(node, 0))))
                .noneMatch(l -> l.startsWith("DCGM_FI_DEV_GPU_TEMP") || l.startsWith("DCGM_FI_DEV_POWER_USAGE"));
        assertThat(scrape()).doesNotContain("made-up");
        assertThat(scrape()).contains("gpucloud_metrics_gpus_limit 20000.0");

        // NaN is not JSON: the record is dead-lettered with the parser's reason.
        TopicTail deadLetters = kafka.deadLetters(Topics.GPU_TELEMETRY);
        String nan = node("t-nan");
        String json = new String(EventCodec.encode(sample(nan, Instant.now())), java.nio.charset.StandardCharsets.UTF_8)
                .replace("\"gpuUtilPercent\":87.0", "\"gpuUtilPercent\":NaN");
        assertThat(json).contains("\"gpuUtilPercent\":NaN");
        kafka.send(withValue(EventRecords.record(Topics.GPU_TELEMETRY, nan, sample(nan, Instant.now()), SOURCE), json));
        Map<String, ConsumerRecord<String, byte[]>> dead = byKey(deadLetters, Set.of(nan));
        assertThat(reason(dead, nan)).startsWith("gpu.telemetry: ").containsIgnoringCase("NaN");
    }

    private static double counter(String reason, String what) {
        String prefix = "gpucloud_metrics_telemetry_dropped_total{reason=\"" + reason + "\",what=\"" + what + "\",} ";
        return scrape().lines().filter(l -> l.startsWith(prefix))
                .mapToDouble(l -> Double.parseDouble(l.substring(prefix.length()))).findFirst().orElse(0);
    }

    @Test
    void samples_off_the_clock_or_of_unknown_hosts_are_dropped_and_counted_and_never_freeze_a_host() {
        String node = node("clock");
        awaitSeries(node, () -> assertThat(scrape()).contains(gpuUuid(node, 0)));
        TopicTail deadLetters = kafka.deadLetters(Topics.GPU_TELEMETRY);
        double futureBefore = counter("future_sample", "sample");
        double unknownBefore = counter("unknown_host", "sample");

        // a day ahead: believable to the contract, not to this service's clock
        kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node, sample(node, Instant.now().plusSeconds(86_400)),
                SOURCE));
        await().atMost(PATIENCE).until(() -> counter("future_sample", "sample") > futureBefore);
        // the year 9999 and a 60 KB model name are refused by the contract itself: dead-lettered
        String y9999 = node("y9999");
        String hugeModel = node("huge-model");
        kafka.send(withValue(EventRecords.record(Topics.GPU_TELEMETRY, y9999, sample(y9999, Instant.now()), SOURCE),
                new String(EventCodec.encode(sample(y9999, Instant.now())), java.nio.charset.StandardCharsets.UTF_8)
                        .replaceFirst("\"sampledAt\":\"[^\"]+\"", "\"sampledAt\":\"9999-12-31T00:00:00Z\"")));
        kafka.send(withValue(EventRecords.record(Topics.GPU_TELEMETRY, hugeModel, sample(hugeModel, Instant.now()),
                SOURCE), new String(EventCodec.encode(sample(hugeModel, Instant.now())),
                        java.nio.charset.StandardCharsets.UTF_8).replace("A100-SXM4-40GB", "M".repeat(60_000))));
        Map<String, ConsumerRecord<String, byte[]>> dead = byKey(deadLetters, Set.of(y9999, hugeModel));
        assertThat(reason(dead, y9999)).startsWith("gpu.telemetry: field 'sampledAt' must be within");
        assertThat(reason(dead, hugeModel)).contains("field 'model' must be at most 128 characters");

        // the host's real samples still apply: its series were not frozen at the future date
        GpuReading changed = new GpuReading(0, gpuUuid(node, 0), "A100-SXM4-40GB", "00000000:10:1C.0", 13.0, null,
                1, 40_000, null, null, null, null, null, null, null, null, null, null, null, null, null, List.of());
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node,
                    new TelemetrySample(node, node, Instant.now(), List.of(changed)), SOURCE));
            assertThat(scrape().lines().filter(l -> l.startsWith("DCGM_FI_DEV_GPU_UTIL{") && l.contains(gpuUuid(node, 0))))
                    .anyMatch(l -> l.endsWith(" 13.0"));
        });

        // telemetry of a host no inventory describes makes no series
        String ghost = node("ghost");
        kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, ghost, sample(ghost, Instant.now()), SOURCE));
        await().atMost(PATIENCE).until(() -> counter("unknown_host", "sample") > unknownBefore);
        assertThat(scrape()).doesNotContain(ghost);
    }

    @Test
    void bad_inventory_is_dead_lettered_with_its_reason_and_the_consumer_goes_on() {
        TopicTail deadLetters = kafka.deadLetters(Topics.GPU_INVENTORY);
        String malformed = node("i-malformed");
        String missingField = node("i-missing");
        String noHeaders = node("i-noheaders");
        String wrongKey = node("i-wrongkey");
        kafka.send(withValue(EventRecords.record(Topics.GPU_INVENTORY, malformed, inventory(malformed), SOURCE),
                "not json"));
        kafka.send(withValue(EventRecords.record(Topics.GPU_INVENTORY, missingField, inventory(missingField), SOURCE),
                without(inventory(missingField), "zone")));
        kafka.send(new ProducerRecord<>(Topics.GPU_INVENTORY.name(), noHeaders, EventCodec.encode(inventory(noHeaders))));
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, wrongKey, inventory(node("someone-else")), SOURCE));

        Map<String, ConsumerRecord<String, byte[]>> dead = byKey(deadLetters,
                Set.of(malformed, missingField, noHeaders, wrongKey));

        assertThat(dead).containsOnlyKeys(malformed, missingField, noHeaders, wrongKey);
        assertThat(reason(dead, malformed)).startsWith("gpu.inventory: not valid JSON");
        assertThat(reason(dead, missingField)).isEqualTo("gpu.inventory: missing required field 'zone'");
        assertThat(reason(dead, noHeaders)).isEqualTo("gpu.inventory: missing required header 'ce_id'");
        assertThat(reason(dead, wrongKey)).contains("differs from field 'nodeId'");

        // The inventory consumer goes on: a later tombstone still removes a host's series.
        String later = node("after-bad-inventory");
        awaitSeries(later, () -> assertThat(scrape()).contains(gpuUuid(later, 0)));
        kafka.send(EventRecords.tombstone(Topics.GPU_INVENTORY, later, SOURCE));
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(scrape()).doesNotContain(later));
    }

    @Test
    void readiness_covers_both_kafka_channels() {
        given().when().get("/q/health/ready").then()
                .statusCode(200)
                .body(containsString("SmallRye Reactive Messaging - readiness check"))
                .body(containsString("telemetry-in"))
                .body(containsString("inventory-in"));
    }

    // --- helpers ---

    private static String node(String name) {
        return "mt-" + RUN + "-" + name;
    }

    private static String gpuUuid(String node, int index) {
        return "GPU-" + node + "-" + index;
    }

    /** The telemetry consumer reads from the end, so the sample is sent again until it shows (after the host's inventory). */
    private void awaitSeries(String node, Runnable assertion) {
        // telemetry of a host the inventory does not describe is dropped: describe it first
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node), SOURCE));
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node, sample(node, Instant.now()), SOURCE));
            assertion.run();
        });
    }

    private static String scrape() {
        return given().accept("text/plain").when().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    /** Reads dead letters until each key has one; returns the latest of each key. */
    private static Map<String, ConsumerRecord<String, byte[]>> byKey(TopicTail deadLetters, Set<String> keys) {
        List<ConsumerRecord<String, byte[]>> dead = deadLetters.until(r -> keys.contains(r.key()),
                seen -> seen.stream().map(ConsumerRecord::key).collect(Collectors.toSet()).containsAll(keys), PATIENCE);
        return dead.stream().collect(Collectors.toMap(ConsumerRecord::key, r -> r, (earlier, later) -> later));
    }

    private static String reason(Map<String, ConsumerRecord<String, byte[]>> dead, String key) {
        return TopicTail.deadLetterReason(dead.get(key));
    }

    private static byte[] without(Object payload, String field) {
        ObjectNode json = EventCodec.mapper().valueToTree(payload);
        json.remove(field);
        return EventCodec.encode(json);
    }

    private static TelemetrySample sample(String node, Instant at) {
        GpuReading full = new GpuReading(0, gpuUuid(node, 0), "A100-SXM4-40GB", "00000000:10:1C.0",
                87.0, 31.0, 30_720, 10_240, 312.5, 123_456_789L, 64, 70, 1410, 1215,
                0L, 0L, null, 0L, 0.8, 0.6, 0.4, List.of());
        GpuReading bare = new GpuReading(1, gpuUuid(node, 1), "A100-SXM4-40GB", null,
                5.0, null, 0, 40_960, null, null, null, null, null, null,
                null, null, null, null, null, null, null, List.of());
        return new TelemetrySample(node, node, at, List.of(full, bare));
    }

    private static HostInventory inventory(String node) {
        List<GpuDevice> gpus = List.of(
                new GpuDevice(0, gpuUuid(node, 0), "A100-SXM4-40GB", 40_960, "00000000:10:1C.0", 0, false, List.of()),
                new GpuDevice(1, gpuUuid(node, 1), "A100-SXM4-40GB", 40_960, null, 0, false, List.of()));
        return new HostInventory(node, node, "p4d.24xlarge", "us-east-1a", CapacityType.ON_DEMAND, 32_770_000,
                96_000, 1_152_000, "fabric-1", List.of("spine-1", "leaf-1"), gpus, List.of(), "simulated",
                Instant.now());
    }
}
