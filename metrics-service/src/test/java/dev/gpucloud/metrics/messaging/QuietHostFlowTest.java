package dev.gpucloud.metrics.messaging;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.TestKafka;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A host that crashes sends no tombstone: once it has been quiet for stale-after, its series go. */
@QuarkusTest
@TestProfile(QuietHostFlowTest.ShortStaleAfter.class)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class QuietHostFlowTest {

    /** Seconds instead of minutes, so the test can wait for it. */
    public static class ShortStaleAfter implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gpucloud.metrics.stale-after", "3s", "gpucloud.metrics.sweep-interval", "1s");
        }
    }

    @Test
    void a_quiet_host_loses_its_series_after_stale_after() {
        String node = "mt-" + UUID.randomUUID().toString().substring(0, 8) + "-quiet";
        String uuid = "GPU-" + node + "-0";
        try (TestKafka kafka = new TestKafka()) {
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, new HostInventory(node, node, "p5.48xlarge",
                    "us-east-1a", CapacityType.ON_DEMAND, 0, 0, 0, null, List.of(), List.of(new GpuDevice(0, uuid,
                            "H100-SXM5-80GB", 81_920, "00000000:18:00.0", 0, false, List.of())), List.of(), "simulated",
                    Instant.now()), "urn:gpucloud:test"));
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node, sample(node, uuid), "urn:gpucloud:test"));
                assertThat(scrape()).contains(uuid);
            });
        }

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(scrape()).doesNotContain(uuid));
    }

    private static TelemetrySample sample(String node, String uuid) {
        GpuReading reading = new GpuReading(0, uuid, "H100-SXM5-80GB", "00000000:18:00.0", 42.0, null, 1, 81_000,
                null, null, null, null, null, null, null, null, null, null, null, null, null, List.of());
        return new TelemetrySample(node, node, Instant.now(), List.of(reading));
    }

    private static String scrape() {
        return given().accept("text/plain").when().get("/q/metrics").then().statusCode(200).extract().asString();
    }
}
