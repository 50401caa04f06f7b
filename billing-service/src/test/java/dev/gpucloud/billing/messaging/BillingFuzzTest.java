package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.testsupport.Hostile;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.RawRecords;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Generated hostile input for every billing REST endpoint and for usage.events, from the limits table: seeded
 * ({@code -Dgpucloud.fuzz.seed}, default 19) and bounded ({@code -Dgpucloud.fuzz.count} per entry point,
 * default 120), with authentication on and hostile, forged, missing and valid tokens. No input may earn a 5xx, and afterwards a canary usage record still bills and readiness is UP.
 * Prints the outcomes per entry point.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class BillingFuzzTest {

    private static final long SEED = Long.getLong("gpucloud.fuzz.seed", 19);
    private static final int COUNT = Integer.getInteger("gpucloud.fuzz.count", 120);
    private static final String OPERATOR = TestIssuer.token("fuzz-ops", List.of(), List.of("operator"));
    private static final String FINANCE = TestIssuer.token("fuzz-fin", List.of(), List.of("finance"));
    private static final Instant T0 = Instant.parse("2025-06-10T08:00:00Z");
    private static final String[] ENDPOINTS = {"/invoices/{t}?month={m}", "/invoices/{t}/{m}", "/invoices/{t}/{m}/lines",
        "/invoices/{t}/{m}/csv", "/invoices/{t}/current", "/invoices/{t}", "/advisor/{t}?month={m}", "/catalog"};

    @TestHTTPResource("/")
    URL url;

    @Inject
    Pool pool;

    private final Hostile hostile = new Hostile(SEED);
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void no_generated_request_earns_a_5xx() throws Exception {
        Map<String, Map<String, Integer>> outcomes = new TreeMap<>();
        for (String endpoint : ENDPOINTS) {
            for (int i = 0; i < COUNT; i++) {
                String tenant = hostile.nextInt(3) == 0 ? "acme" : hostile.text(Limits.TENANT);
                String month = hostile.nextInt(3) == 0 ? "2025-06" : hostile.text(Limits.ID);
                String path = endpoint.replace("{t}", encode(tenant)).replace("{m}", encode(month));
                HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + path))
                        .timeout(Duration.ofSeconds(20)).GET();
                switch (hostile.nextInt(4)) {
                    case 0 -> header(request, "Authorization", "Bearer " + TestIssuer.token("fuzz", List.of(tenant),
                            List.of("member")));
                    case 1 -> header(request, "Authorization", "Bearer " + (hostile.nextBoolean() ? OPERATOR
                            : hostile.text(Limits.ID)));
                    case 2 -> header(request, "Authorization", hostile.text(Limits.TENANT));
                    default -> { } // no token at all
                }
                record(outcomes, "GET " + endpoint, send(request));
            }
        }
        for (int i = 0; i < COUNT; i++) {
            ObjectNode entry = EventCodec.mapper().createObjectNode().put("gpuModel", "FUZZ-" + i)
                    .put("capacityType", "SPOT").put("effectiveFrom", "2030-01-01T00:00:00Z")
                    .put("microsPerGpuHour", 1_000_000).put("note", "fuzz");
            String[] fields = {"gpuModel", "capacityType", "effectiveFrom", "microsPerGpuHour", "note"};
            String field = fields[hostile.nextInt(fields.length)];
            if (hostile.nextBoolean()) {
                entry.set(field, TextNode.valueOf(hostile.text(Limits.DETAIL)));
            } else {
                entry.put(field, hostile.number(Limits.PRICE_CEILING));
            }
            byte[] body = entry.toString().getBytes(StandardCharsets.UTF_8);
            if (hostile.nextInt(4) == 0) {
                body = hostile.mutate(body);
            }
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + "/catalog/entries"))
                    .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            if (hostile.nextInt(4) != 0) {
                request.header("Authorization", "Bearer " + OPERATOR);
            }
            record(outcomes, "POST /catalog/entries", send(request));
        }
        for (int i = 0; i < COUNT; i++) {
            String tenant = hostile.nextInt(3) == 0 ? "fuzz-close" : hostile.text(Limits.TENANT);
            String month = hostile.nextInt(3) == 0 ? "2025-06" : hostile.text(Limits.ID);
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + "/invoices/" + encode(tenant) + "/"
                    + encode(month) + "/close")).timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.noBody());
            if (hostile.nextInt(4) != 0) {
                header(request, "Authorization", "Bearer " + (hostile.nextBoolean() ? FINANCE : hostile.text(Limits.ID)));
            }
            record(outcomes, "POST /invoices/{t}/{m}/close", send(request));
        }
        for (int i = 0; i < COUNT; i++) {
            ObjectNode adjustment = EventCodec.mapper().createObjectNode().put("amountMicros", -1_000_000)
                    .put("reason", "fuzz").put("month", "2025-06");
            String[] fields = {"amountMicros", "reason", "month", "extra"};
            String field = fields[hostile.nextInt(fields.length)];
            if (hostile.nextBoolean()) {
                adjustment.set(field, TextNode.valueOf(hostile.text(Limits.ADJUSTMENT_REASON)));
            } else {
                adjustment.put(field, hostile.number(Limits.ADJUSTMENT_AMOUNT));
            }
            byte[] body = adjustment.toString().getBytes(StandardCharsets.UTF_8);
            if (hostile.nextInt(4) == 0) {
                body = hostile.mutate(body);
            }
            String tenant = hostile.nextInt(3) == 0 ? "fuzz-adjust" : hostile.text(Limits.TENANT);
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + "/invoices/" + encode(tenant)
                    + "/adjustments")).timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            header(request, "Idempotency-Key", hostile.nextInt(3) == 0 ? "fuzz-" + i : hostile.text(Limits.IDEMPOTENCY_KEY));
            if (hostile.nextInt(4) != 0) {
                request.header("Authorization", "Bearer " + FINANCE);
            }
            record(outcomes, "POST /invoices/{t}/adjustments", send(request));
        }
        outcomes.forEach((endpoint, codes) -> System.out.printf("fuzz REST %s: %d inputs %s%n", endpoint,
                codes.values().stream().mapToInt(Integer::intValue).sum(), codes));
        outcomes.forEach((endpoint, codes) -> assertThat(codes.keySet()).as(endpoint)
                .allMatch(code -> code.equals("client-refused") || code.equals("cut-oversized")
                        || Integer.parseInt(code) < 500));
    }

    @Test
    void hostile_usage_records_never_stall_billing_and_a_canary_still_bills() throws Exception {
        String tenant = unique("t-fuzz");
        String template = EventCodec.encodeToString(usage(tenant, "job-fuzz", "alloc-fuzz", T0,
                T0.plusSeconds(60), Sku.wholeGpu(GpuModels.A100_SXM4_40GB), 1, CapacityType.ON_DEMAND));
        String[] fields = {"allocationId", "jobId", "tenant", "nodeId", "from", "to", "units", "zone", "capacityType",
            "sku"};
        try (UsageTopic topic = new UsageTopic()) {
            for (int i = 0; i < COUNT; i++) {
                ObjectNode json = (ObjectNode) EventCodec.mapper().readTree(template);
                String allocation = "alloc-fuzz-" + i;
                json.put("allocationId", allocation);
                String field = fields[hostile.nextInt(fields.length)];
                switch (hostile.nextInt(4)) {
                    case 0 -> json.put(field, hostile.number(Limits.UNITS));
                    case 1 -> json.put(field, hostile.nextBoolean() ? "+1000000000-12-31T00:00:00Z"
                            : "1970-01-01T00:00:00Z");
                    default -> json.set(field, TextNode.valueOf(hostile.text(Limits.ID)));
                }
                ProducerRecord<String, byte[]> record = UsageTopic.withHeaders(UsageTopic.raw(allocation, json.toString()));
                if (hostile.nextInt(4) == 0) {
                    record = RawRecords.withValue(record, hostile.mutate(record.value()));
                }
                if (hostile.nextInt(8) == 0) {
                    record.headers().remove("ce_type").add("ce_type", hostile.text(Limits.ID)
                            .getBytes(StandardCharsets.UTF_8));
                }
                topic.sendRaw(record);
            }
            System.out.printf("fuzz topic usage.events: %d records sent%n", COUNT);
            String canaryTenant = unique("t-canary");
            topic.send(usage(canaryTenant, "job-canary", unique("alloc"), T0, T0.plusSeconds(120),
                    Sku.wholeGpu(GpuModels.A100_SXM4_40GB), 1, CapacityType.ON_DEMAND));
            UsageTopic.awaitFolded(pool, Duration.ofSeconds(90));
            given().auth().oauth2(TestIssuer.token("canary", List.of(canaryTenant), List.of("member")))
                    .queryParam("month", "2025-06")
                    .get("/invoices/{tenant}", canaryTenant).then().statusCode(200)
                    .body("lines[0].seconds", equalTo(120));
        }
        given().get("/q/health/ready").then().statusCode(200);
    }

    private String base() {
        String text = url.toString();
        return text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Sets a header if the client lets it (it refuses control characters itself). */
    private static void header(HttpRequest.Builder request, String name, String value) {
        try {
            request.header(name, value);
        } catch (IllegalArgumentException refused) {
            // not sent: the client refuses it, so no server ever sees it
        }
    }

    /** The status of the last answer (0: none): after a 414 or 431 the listener has closed that connection. */
    private int lastStatus;

    private String send(HttpRequest.Builder request) throws Exception {
        HttpRequest built;
        try {
            built = request.build();
        } catch (IllegalArgumentException refused) {
            return "client-refused";
        }
        try {
            lastStatus = http.send(built, HttpResponse.BodyHandlers.discarding()).statusCode();
            return String.valueOf(lastStatus);
        } catch (java.io.IOException cut) {
            // a request line or header past the listener's limits (4 KiB, 16 KiB) may be answered and the connection
            // closed before the client has sent it all: the client then sees no answer, which is a refusal too
            boolean oversized = built.uri().toString().length() > 4096 || built.headers().map().values().stream()
                    .flatMap(List::stream).anyMatch(value -> value.length() > 16 * 1024);
            if (oversized) {
                lastStatus = 0;
                return "cut-oversized";
            }
            // after a 414 or 431 the listener closes the connection without saying so; the client retries a GET on
            // a new one by itself, never a POST: this one goes again, once, on a connection of its own
            if (lastStatus != 414 && lastStatus != 431) {
                throw cut;
            }
            lastStatus = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                    .send(built, HttpResponse.BodyHandlers.discarding()).statusCode();
            return String.valueOf(lastStatus);
        }
    }

    private static void record(Map<String, Map<String, Integer>> outcomes, String endpoint, String code) {
        outcomes.computeIfAbsent(endpoint, ignored -> new TreeMap<>()).merge(code, 1, Integer::sum);
    }
}
