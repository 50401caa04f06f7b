package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;

import dev.gpucloud.billing.repository.InvoiceBook;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A closed invoice never changes: usage that arrives for its month later, and held usage the catalog prices
 * later, are adjustment lines (with the month and the reason) on the tenant's next open invoice, billed once.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class InvoiceClosingFlowTest {

    private static final Sku A100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
    private static final YearMonth JUNE = YearMonth.of(2025, 6);
    private static final YearMonth JULY = YearMonth.of(2025, 7);
    private static final Instant T0 = Instant.parse("2025-06-10T08:00:00Z");
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

    @Test
    void late_usage_for_a_closed_month_is_an_adjustment_on_the_next_open_invoice_billed_once() {
        String alloc = unique("alloc");
        String lateAlloc = unique("alloc");
        topic.send(usage(tenant, "job-1", alloc, T0, T0.plusSeconds(3600), A100, 1, CapacityType.ON_DEMAND));
        awaitFolded();
        assertThat(book.close(tenant, JUNE).await().atMost(PATIENCE)).isTrue();
        assertThat(book.close(tenant, JUNE).await().atMost(PATIENCE)).as("closing twice does nothing").isFalse();

        // late: 30 more minutes of the same allocation, a new allocation, and a redelivery of that report
        UsageEvent more = usage(tenant, "job-1", alloc, T0.plusSeconds(3600), T0.plusSeconds(5400), A100, 1,
                CapacityType.ON_DEMAND);
        CloudEvent moreEvent = CloudEvent.create(Topics.USAGE_EVENTS.eventType(), UsageTopic.SOURCE, Instant.now());
        topic.send(more, moreEvent);
        topic.send(more, moreEvent);
        topic.send(usage(tenant, "job-2", lateAlloc, T0, T0.plusSeconds(30), A100, 1, CapacityType.ON_DEMAND));
        awaitFolded();

        given().get("/invoices/{tenant}/{month}", tenant, "2025-06").then()
                .statusCode(200)
                .body("status", equalTo("CLOSED"))
                .body("closedAt", notNullValue())
                .body("lines", hasSize(1))
                .body("lines[0].seconds", equalTo(3600))
                .body("totalMicros", equalTo(2_745_000));
        given().get("/invoices/{tenant}/{month}", tenant, "2025-07").then()
                .statusCode(200)
                .body("status", equalTo("OPEN"))
                .body("lines", empty())
                .body("adjustments", hasSize(2))
                .body("adjustments.forMonth", hasItem("2025-06"))
                .body("adjustments.find { it.jobId == 'job-1' }.seconds", equalTo(1800))
                .body("adjustments.find { it.jobId == 'job-1' }.amountMicros", equalTo(1_372_500))
                .body("adjustments.find { it.jobId == 'job-1' }.reason", containsString("arrived after 2025-06 closed"))
                .body("adjustments.find { it.jobId == 'job-2' }.seconds", equalTo(60))
                .body("totalMicros", equalTo(1_372_500 + 45_750));

        // July closes with the adjustment frozen on it; August owes nothing more for June
        assertThat(book.close(tenant, JULY).await().atMost(PATIENCE)).isTrue();
        given().get("/invoices/{tenant}/{month}", tenant, "2025-07").then()
                .body("status", equalTo("CLOSED"))
                .body("adjustments", hasSize(2))
                .body("totalMicros", equalTo(1_372_500 + 45_750));
        given().get("/invoices/{tenant}/{month}", tenant, "2025-08").then()
                .body("status", equalTo("OPEN"))
                .body("adjustments", empty());
        given().get("/invoices/{tenant}", tenant).then()
                .body("closed", equalTo(java.util.List.of("2025-06", "2025-07")));
        given().get("/invoices/{tenant}/{month}/csv", tenant, "2025-07").then()
                .statusCode(200)
                .contentType(containsString("text/csv"))
                .body(containsString("ADJUSTMENT,2025-06,job-1,A100-SXM4-40GB,ON_DEMAND,1800,2745000,1372500"))
                .body(containsString("TOTAL,,,,,,," + (1_372_500 + 45_750) + ",,,\r\n"));
    }

    @Test
    void held_usage_of_an_unknown_model_is_billed_once_the_catalog_prices_it_even_after_its_month_closed() {
        String model = "ZX" + unique("gpu").substring(4).toUpperCase();
        String alloc = unique("alloc");
        topic.send(usage(tenant, "job-1", alloc, T0, T0.plusSeconds(3600), Sku.wholeGpu(model), 1,
                CapacityType.ON_DEMAND));
        awaitFolded();
        assertThat(book.close(tenant, JUNE).await().atMost(PATIENCE)).isTrue();
        given().get("/invoices/{tenant}/{month}", tenant, "2025-06").then()
                .body("lines[0].seconds", equalTo(3600))
                .body("lines[0].amountMicros", equalTo(0))
                .body("lines[0].flag", containsString("held: GPU model '" + model + "' is not in the price catalog"));

        given().contentType(ContentType.JSON)
                .body("{\"gpuModel\": \"" + model + "\", \"capacityType\": \"ON_DEMAND\", "
                        + "\"effectiveFrom\": \"2025-01-01T00:00:00Z\", \"microsPerGpuHour\": 1000000, "
                        + "\"note\": \"test price\"}")
                .post("/catalog/entries").then()
                .statusCode(201)
                .body("gpuModel", equalTo(model));

        given().get("/invoices/{tenant}/{month}", tenant, "2025-06").then()
                .body("status", equalTo("CLOSED"))
                .body("lines[0].amountMicros", equalTo(0));
        given().get("/invoices/{tenant}/{month}", tenant, "2025-07").then()
                .body("adjustments", hasSize(2))
                .body("adjustments.find { it.seconds == -3600 }.amountMicros", equalTo(0))
                .body("adjustments.find { it.seconds == 3600 }.amountMicros", equalTo(1_000_000))
                .body("adjustments[0].reason", containsString("held usage of " + model + " priced"))
                .body("totalMicros", equalTo(1_000_000));
    }

    @Test
    void invoices_close_by_themselves_once_the_grace_period_is_over_and_a_late_month_closes_its_next() {
        String alloc = unique("alloc");
        topic.send(usage(tenant, "job-1", alloc, T0, T0.plusSeconds(3600), A100, 1, CapacityType.ON_DEMAND));
        awaitFolded();
        // the test profile's grace is 36,500 days: June 2025 is due in 2125, not now
        assertThat(book.closeDue(Instant.now(), tenant).await().atMost(PATIENCE)).isZero();
        Instant later = book.closing().closesAt(JUNE).plusSeconds(1);
        assertThat(book.closeDue(later, tenant).await().atMost(PATIENCE)).isEqualTo(1);
        assertThat(book.closeDue(later, tenant).await().atMost(PATIENCE)).as("nothing left to close").isZero();

        // late usage for June: July has no usage, but closes in turn, carrying the adjustment
        String lateAlloc = unique("alloc");
        topic.send(usage(tenant, "job-2", lateAlloc, T0, T0.plusSeconds(120), A100, 1, CapacityType.ON_DEMAND));
        awaitFolded();
        assertThat(book.closeDue(book.closing().closesAt(JULY), tenant).await().atMost(PATIENCE)).isEqualTo(1);
        given().get("/invoices/{tenant}/{month}", tenant, "2025-07").then()
                .body("status", equalTo("CLOSED"))
                .body("lines", empty())
                .body("adjustments", hasSize(1))
                .body("adjustments[0].seconds", equalTo(120))
                .body("totalMicros", equalTo(91_500));
        given().get("/invoices/{tenant}/{month}", tenant, "2025-06").then()
                .body("status", equalTo("CLOSED"))
                .body("totalMicros", equalTo(2_745_000));
    }

    /** Waits until every usage record sent so far is folded and its snapshot written. */
    private void awaitFolded() {
        UsageTopic.awaitFolded(pool, PATIENCE);
    }
}
