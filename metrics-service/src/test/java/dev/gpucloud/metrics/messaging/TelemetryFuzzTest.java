package dev.gpucloud.metrics.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.testsupport.Hostile;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.RawRecords;
import dev.gpucloud.testsupport.TestKafka;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Generated hostile records for gpu.telemetry and gpu.inventory, from the limits table: seeded
 * ({@code -Dgpucloud.fuzz.seed}, default 19) and bounded ({@code -Dgpucloud.fuzz.count} per topic, default 120).
 * Afterwards both consumers still work (a canary host gets its series) and readiness is UP.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class TelemetryFuzzTest {

    private static final long SEED = Long.getLong("gpucloud.fuzz.seed", 19);
    private static final int COUNT = Integer.getInteger("gpucloud.fuzz.count", 120);
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    private final Hostile hostile = new Hostile(SEED);

    @Test
    void hostile_telemetry_and_inventory_never_stop_the_consumers() throws Exception {
        String[] telemetryFields = {"nodeId", "hostname", "sampledAt", "gpus"};
        String[] inventoryFields = {"nodeId", "hostname", "zone", "instanceType", "observedAt", "gpus", "switchPath"};
        try (TestKafka kafka = new TestKafka()) {
            for (int i = 0; i < COUNT; i++) {
                String node = "fz-" + RUN + "-" + i;
                kafka.send(hostileRecord(Topics.GPU_INVENTORY, node, inventory(node), inventoryFields));
                kafka.send(hostileRecord(Topics.GPU_TELEMETRY, node, sample(node), telemetryFields));
            }
            System.out.printf("fuzz topic gpu.inventory: %d records sent%nfuzz topic gpu.telemetry: %d records sent%n",
                    COUNT, COUNT);

            String canary = "fz-" + RUN + "-canary";
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, canary, inventory(canary), "fuzz"));
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, canary, sample(canary), "fuzz"));
                assertThat(scrape()).contains("GPU-" + canary + "-0");
            });
        }
        given().get("/q/health/ready").then().statusCode(200);
    }

    /** A record with one field replaced by a hostile value, its bytes sometimes mutated, its type sometimes wrong. */
    private <T> ProducerRecord<String, byte[]> hostileRecord(Topic<T> topic, String key, T payload, String[] fields)
            throws Exception {
        ObjectNode json = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(payload));
        String field = fields[hostile.nextInt(fields.length)];
        switch (hostile.nextInt(4)) {
            case 0 -> json.put(field, hostile.number(Limits.GPUS_PER_HOST));
            case 1 -> json.put(field, hostile.nextBoolean() ? "9999-12-31T00:00:00Z" : "1970-01-01T00:00:00Z");
            default -> json.set(field, TextNode.valueOf(hostile.text(Limits.HOSTNAME)));
        }
        ProducerRecord<String, byte[]> record = RawRecords.withValue(EventRecords.record(topic, key, payload, "fuzz"),
                json.toString().getBytes(StandardCharsets.UTF_8));
        if (hostile.nextInt(4) == 0) {
            record = RawRecords.withValue(record, hostile.mutate(record.value()));
        }
        if (hostile.nextInt(8) == 0) {
            record.headers().remove("ce_type")
                    .add("ce_type", "dev.gpucloud.job.request.v1".getBytes(StandardCharsets.UTF_8));
        }
        return record;
    }

    private static HostInventory inventory(String node) {
        return new HostInventory(node, node, "g5.xlarge", "us-east-1a", CapacityType.ON_DEMAND, 1_006_000, 4_000,
                16_384, null, List.of(), List.of(new GpuDevice(0, "GPU-" + node + "-0", "A10G", 23_028, null, -1, false,
                        List.of())), List.of(), "simulated", Instant.now());
    }

    private static TelemetrySample sample(String node) {
        return new TelemetrySample(node, node, Instant.now(), List.of(new GpuReading(0, "GPU-" + node + "-0", "A10G",
                null, 40.0, null, 1_024, 22_004, null, null, null, null, null, null, null, null, null, null, null, null,
                null, List.of())));
    }

    private static String scrape() {
        return given().accept("text/plain").when().get("/q/metrics").then().statusCode(200).extract().asString();
    }
}
