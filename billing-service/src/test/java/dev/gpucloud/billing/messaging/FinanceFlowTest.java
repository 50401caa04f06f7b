package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;

import dev.gpucloud.billing.repository.InvoiceBook;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Finance closes ended months ahead of their grace period and books manual adjustments, over REST with
 * authentication on, against real usage: a close freezes the month once, an adjustment counts once in the JSON,
 * the CSV and the total (also once frozen), a repeat books nothing, and a booking that races a close is on exactly
 * one invoice.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
@WithTestResource(TestIssuer.class)
class FinanceFlowTest {

    private static final Sku A100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
    private static final Instant T0 = Instant.parse("2025-06-10T08:00:00Z");
    private static final long HOUR_OF_A100 = 2_745_000;
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    Pool pool;

    @Inject
    InvoiceBook book;

    private UsageTopic topic;
    private String tenant;

    @BeforeEach
    void open() {
        topic = new UsageTopic();
        tenant = unique("t");
    }

    @AfterEach
    void close() {
        topic.close();
    }

    private static String finance() {
        return TestIssuer.token("fin", List.of(), List.of("finance"));
    }

    private String member() {
        return TestIssuer.token("alice", List.of(tenant), List.of("member"));
    }

    private Response closeMonth(String month) {
        return given().auth().oauth2(finance()).post("/invoices/{tenant}/{month}/close", tenant, month);
    }

    private Response adjust(String key, String body) {
        return given().auth().oauth2(finance()).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                .post("/invoices/{tenant}/adjustments", tenant);
    }

    private void hourOfUsageInJune() {
        topic.send(usage(tenant, "job-1", unique("alloc"), T0, T0.plusSeconds(3600), A100, 1, CapacityType.ON_DEMAND));
        UsageTopic.awaitFolded(pool, PATIENCE);
    }

    @Test
    void closing_an_ended_month_freezes_it_and_closing_it_again_changes_nothing() {
        hourOfUsageInJune();

        closeMonth("2025-06").then()
                .statusCode(200)
                .body("closedNow", equalTo(true))
                .body("message", equalTo("closed the invoice of " + tenant + " for 2025-06"))
                .body("invoice.status", equalTo("CLOSED"))
                .body("invoice.closedAt", notNullValue())
                .body("invoice.lines[0].seconds", equalTo(3600))
                .body("invoice.totalMicros", equalTo((int) HOUR_OF_A100));
        String closedAt = given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06", tenant).then()
                .body("status", equalTo("CLOSED")).extract().path("closedAt");

        // usage for June after the close is late: June stays as it was
        topic.send(usage(tenant, "job-2", unique("alloc"), T0, T0.plusSeconds(1800), A100, 1, CapacityType.ON_DEMAND));
        UsageTopic.awaitFolded(pool, PATIENCE);
        closeMonth("2025-06").then()
                .statusCode(200)
                .body("closedNow", equalTo(false))
                .body("message", containsString("already closed at " + closedAt + ", nothing changed"))
                .body("invoice.closedAt", equalTo(closedAt))
                .body("invoice.lines", hasSize(1))
                .body("invoice.totalMicros", equalTo((int) HOUR_OF_A100));
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-07", tenant).then()
                .body("status", equalTo("OPEN"))
                .body("adjustments[0].forMonth", equalTo("2025-06"))
                .body("adjustments[0].seconds", equalTo(1800));
    }

    @Test
    void the_current_and_a_future_month_cannot_close_and_say_when_they_will() {
        YearMonth now = YearMonth.now(ZoneOffset.UTC);
        for (YearMonth month : List.of(now, now.plusMonths(1), now.plusYears(30))) {
            closeMonth(month.toString()).then()
                    .statusCode(409)
                    .body("error", equalTo("conflict"))
                    .body("parameter", equalTo("month"))
                    .body("message", containsString("cannot close yet: the month ends at "
                            + month.plusMonths(1).atDay(1) + "T00:00:00Z"))
                    .body("message", containsString("closes by itself at " + book.closing().closesAt(month)));
        }
        given().auth().oauth2(member()).get("/invoices/{tenant}", tenant).then().body("closed", empty());
    }

    @Test
    void an_adjustment_counts_once_in_the_json_the_csv_and_the_total_also_once_the_month_is_closed() {
        hourOfUsageInJune();
        // no month given: June is the earliest month not closed
        adjust(UUID.randomUUID().toString(), "{\"amountMicros\": -1000000, \"reason\": \"SLA credit: 1 h down\"}")
                .then()
                .statusCode(201)
                .header("Location", containsString("/invoices/" + tenant + "/2025-06"))
                .body("month", equalTo("2025-06"))
                .body("amountMicros", equalTo(-1_000_000))
                .body("amountUsd", equalTo("-1.000000"))
                .body("bookedBy", equalTo("fin"))
                .body("repeated", equalTo(false));
        long total = HOUR_OF_A100 - 1_000_000;

        for (String phase : List.of("open", "closed")) {
            JsonPath invoice = given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06", tenant).then()
                    .statusCode(200)
                    .body("adjustments", hasSize(1))
                    .body("adjustments[0].adjustmentId", notNullValue())
                    .body("adjustments[0].forMonth", equalTo("2025-06"))
                    .body("adjustments[0].reason", equalTo("SLA credit: 1 h down"))
                    .body("adjustments[0].amountMicros", equalTo(-1_000_000))
                    .body("adjustments[0].seconds", equalTo(0))
                    .body("totalMicros", equalTo((int) total))
                    .body("total", equalTo("1.74"))
                    .extract().jsonPath();
            assertThat(invoice.getString("status")).as(phase).isEqualTo(phase.equals("open") ? "OPEN" : "CLOSED");
            String csv = given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06/csv", tenant).then()
                    .statusCode(200).extract().asString();
            List<String[]> rows = csv.lines().skip(1).map(line -> line.split(",", -1)).toList();
            assertThat(rows).as(phase).allSatisfy(row -> assertThat(row).hasSize(14));
            assertThat(rows).filteredOn(row -> row[3].equals("ADJUSTMENT")).singleElement().satisfies(row -> {
                assertThat(row[4]).isEqualTo("2025-06");
                assertThat(row[10]).isEqualTo("-1000000");
                assertThat(row[13]).isEqualTo("SLA credit: 1 h down");
            });
            long rowsSum = rows.stream().filter(row -> !row[3].equals("TOTAL")).mapToLong(row -> Long.parseLong(row[10]))
                    .sum();
            assertThat(rowsSum).as(phase + ": the rows add up to the total").isEqualTo(total);
            assertThat(rows).filteredOn(row -> row[3].equals("TOTAL")).singleElement()
                    .satisfies(row -> assertThat(row[10]).isEqualTo(Long.toString(total)));
            if (phase.equals("open")) {
                closeMonth("2025-06").then().statusCode(200).body("invoice.totalMicros", equalTo((int) total));
            }
        }
        // July does not carry it, and late usage for June is corrected without it
        topic.send(usage(tenant, "job-2", unique("alloc"), T0, T0.plusSeconds(1800), A100, 1, CapacityType.ON_DEMAND));
        UsageTopic.awaitFolded(pool, PATIENCE);
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-07", tenant).then()
                .body("adjustments", hasSize(1))
                .body("adjustments[0].amountMicros", equalTo((int) (HOUR_OF_A100 / 2)))
                .body("totalMicros", equalTo((int) (HOUR_OF_A100 / 2)));
        assertThat(book.close(tenant, YearMonth.of(2025, 7)).await().atMost(PATIENCE)).isTrue();
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-08", tenant).then()
                .body("adjustments", empty());
    }

    @Test
    void an_adjustment_without_a_month_goes_on_the_current_month_once_every_earlier_one_is_closed() {
        hourOfUsageInJune();
        closeMonth("2025-06").then().statusCode(200);
        String current = YearMonth.now(ZoneOffset.UTC).toString();
        adjust(UUID.randomUUID().toString(), "{\"amountMicros\": 2500000, \"reason\": \"support plan, July\"}").then()
                .statusCode(201)
                .body("month", equalTo(current));
        given().auth().oauth2(member()).get("/invoices/{tenant}/current", tenant).then()
                .body("month", equalTo(current))
                .body("totalMicros", equalTo(2_500_000));
        given().auth().oauth2(member()).get("/invoices/{tenant}", tenant).then()
                .body("months", org.hamcrest.Matchers.hasItems("2025-06", current));
    }

    @Test
    void a_month_with_nothing_but_a_manual_adjustment_closes_in_turn() {
        adjust(UUID.randomUUID().toString(), "{\"amountMicros\": -300000, \"month\": \"2025-05\", "
                + "\"reason\": \"goodwill\"}").then().statusCode(201).body("month", equalTo("2025-05"));
        Instant later = book.closing().closesAt(YearMonth.of(2025, 5)).plusSeconds(1);
        assertThat(book.closeDue(later, tenant).await().atMost(PATIENCE)).isEqualTo(1);
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-05", tenant).then()
                .body("status", equalTo("CLOSED"))
                .body("adjustments", hasSize(1))
                .body("totalMicros", equalTo(-300_000));
    }

    @Test
    void a_repeat_with_the_same_key_books_nothing_and_the_key_with_another_request_is_a_409() {
        String key = "credit-" + UUID.randomUUID();
        String body = "{\"amountMicros\": -12500000, \"reason\": \"SLA credit\", \"month\": \"2025-06\"}";
        long id = adjust(key, body).then().statusCode(201).extract().jsonPath().getLong("id");
        // the same request, its fields in another order and spacing: the same adjustment, nothing new
        adjust(key, "{ \"month\": \"2025-06\",\"reason\": \"SLA credit\",  \"amountMicros\": -12500000 }").then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true")
                .body("id", equalTo((int) id))
                .body("repeated", equalTo(true));
        for (String other : List.of(
                "{\"amountMicros\": -12500001, \"reason\": \"SLA credit\", \"month\": \"2025-06\"}",
                "{\"amountMicros\": -12500000, \"reason\": \"SLA credit!\", \"month\": \"2025-06\"}",
                "{\"amountMicros\": -12500000, \"reason\": \"SLA credit\"}")) {
            adjust(key, other).then()
                    .statusCode(409)
                    .body("parameter", equalTo("Idempotency-Key"))
                    .body("message", containsString("was used on"))
                    .body("message", containsString("a new adjustment needs a new key"));
        }
        // the key with another tenant is another request too
        given().auth().oauth2(finance()).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                .post("/invoices/{tenant}/adjustments", unique("t")).then().statusCode(409);
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06", tenant).then()
                .body("adjustments", hasSize(1))
                .body("totalMicros", equalTo(-12_500_000));
    }

    @Test
    void a_closed_month_named_explicitly_is_a_409_and_nothing_is_booked() {
        hourOfUsageInJune();
        closeMonth("2025-06").then().statusCode(200);
        adjust(UUID.randomUUID().toString(), "{\"amountMicros\": -1, \"reason\": \"late credit\", "
                + "\"month\": \"2025-06\"}").then()
                .statusCode(409)
                .body("parameter", equalTo("month"))
                .body("message", containsString("closed at"))
                .body("message", containsString("never changes"));
        given().auth().oauth2(member()).get("/invoices/{tenant}", tenant).then()
                .body("months", equalTo(List.of("2025-06")));
        given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06", tenant).then()
                .body("adjustments", empty())
                .body("totalMicros", equalTo((int) HOUR_OF_A100));
    }

    @Test
    void bookings_that_race_a_close_are_each_on_exactly_one_invoice() throws Exception {
        hourOfUsageInJune();
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
            List<Future<Response>> bookings = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                int n = i;
                bookings.add(callers.submit(() -> adjust(UUID.randomUUID().toString(), "{\"amountMicros\": -" + (n + 1)
                        + ", \"reason\": \"race " + n + "\"}")));
                if (i == 8) {
                    bookings.add(callers.submit((Callable<Response>) () -> closeMonth("2025-06")));
                }
            }
            Set<Long> booked = new HashSet<>();
            for (Future<Response> f : bookings) {
                Response r = f.get();
                if (r.jsonPath().get("invoice") == null) {
                    assertThat(r.statusCode()).isEqualTo(201);
                    booked.add(r.jsonPath().getLong("id"));
                }
            }
            assertThat(booked).hasSize(24);
            String current = YearMonth.now(ZoneOffset.UTC).toString();
            List<Long> june = given().auth().oauth2(member()).get("/invoices/{tenant}/2025-06", tenant).then()
                    .body("status", equalTo("CLOSED")).extract().jsonPath().getList("adjustments.adjustmentId", Long.class);
            List<Long> now = given().auth().oauth2(member()).get("/invoices/{tenant}/{month}", tenant, current).then()
                    .body("status", equalTo("OPEN")).extract().jsonPath().getList("adjustments.adjustmentId", Long.class);
            List<Long> all = new ArrayList<>(june);
            all.addAll(now);
            assertThat(all).as("each booked adjustment on exactly one invoice").containsExactlyInAnyOrderElementsOf(booked);
        } finally {
            callers.shutdownNow();
        }
    }
}
