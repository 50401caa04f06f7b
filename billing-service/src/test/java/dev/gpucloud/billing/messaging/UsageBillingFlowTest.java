package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.raw;
import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static dev.gpucloud.billing.messaging.UsageTopic.withHeaders;
import static dev.gpucloud.testsupport.TopicTail.header;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Usage records on the real broker become invoices in the real database, each counted once. */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class UsageBillingFlowTest {

    private static final Sku A100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
    private static final Instant T0 = Instant.parse("2025-06-10T08:00:00Z");
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Inject
    Pool pool;

    private UsageTopic topic;
    private String tenant;
    private String job;

    @BeforeEach
    void open() {
        topic = new UsageTopic();
        tenant = unique("t");
        job = unique("job");
    }

    @AfterEach
    void close() {
        topic.close();
    }

    @Test
    void duplicates_overlaps_and_reordering_are_billed_once() {
        String alloc = unique("alloc");
        UsageEvent first = a100(alloc, 0, 40);
        CloudEvent firstEvent = CloudEvent.create(Topics.USAGE_EVENTS.eventType(), UsageTopic.SOURCE, Instant.now());

        topic.send(first, firstEvent);
        topic.send(first, firstEvent);            // a redelivery: the same ce_id
        topic.send(a100(alloc, 0, 40));           // the same interval reported again under a new ce_id
        topic.send(a100(alloc, 30, 70));          // an overlap
        topic.send(a100(alloc, 100, 130));        // out of order...
        topic.send(a100(alloc, 70, 100));         // ...and the gap filled late

        awaitFolded();
        // 130 s of one A100 at 2,745,000 micro-USD per hour = 99,125 micro-USD
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("tenant", equalTo(tenant))
                .body("month", equalTo("2025-06"))
                .body("status", equalTo("OPEN"))
                .body("lines", hasSize(1))
                .body("lines[0].jobId", equalTo(job))
                .body("lines[0].sku", equalTo("A100-SXM4-40GB"))
                .body("lines[0].capacityType", equalTo("ON_DEMAND"))
                .body("lines[0].seconds", equalTo(130))
                .body("lines[0].rateMicrosPerHour", equalTo(2_745_000))
                .body("lines[0].amountMicros", equalTo(99_125))
                .body("lines[0].flag", nullValue())
                .body("totalMicros", equalTo(99_125))
                .body("total", equalTo("0.10"));
    }

    @Test
    void a_gap_is_not_billed_and_a_short_allocation_bills_the_minimum() {
        String gapped = unique("alloc");
        String brief = unique("alloc");
        topic.send(a100(gapped, 0, 100));
        topic.send(a100(gapped, 400, 500));
        topic.send(a100(brief, 0, 5));

        awaitFolded();
        // 200 s + 60 s (the minimum for 5 s) of the same job and SKU: one line of 260 s
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("lines", hasSize(1))
                .body("lines[0].seconds", equalTo(260));
    }

    @Test
    void usage_across_a_month_boundary_is_split_between_the_invoices() {
        String alloc = unique("alloc");
        topic.send(usage(tenant, job, alloc, Instant.parse("2025-05-31T23:58:00Z"),
                Instant.parse("2025-06-01T00:03:00Z"), A100, 1, CapacityType.ON_DEMAND));

        awaitFolded();
        given().queryParam("month", "2025-05").get("/invoices/{tenant}", tenant).then()
                .statusCode(200).body("lines[0].seconds", equalTo(120));
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200).body("lines[0].seconds", equalTo(180));
        given().get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("tenant", equalTo(tenant))
                .body("months", contains("2025-05", "2025-06"));
    }

    @Test
    void mig_slices_fractions_units_and_unknown_skus_are_rated() {
        String mig = unique("alloc");
        String fraction = unique("alloc");
        String unknown = unique("alloc");
        String spot = unique("alloc");
        topic.send(usage(tenant, job, mig, T0, T0.plusSeconds(3600), new Sku(GpuModels.H100_SXM5_80GB, "1g.10gb", 1000),
                2, CapacityType.ON_DEMAND));
        topic.send(usage(tenant, job, fraction, T0, T0.plusSeconds(7200), new Sku(GpuModels.A10G, null, 250),
                1, CapacityType.ON_DEMAND));
        topic.send(usage(tenant, job, unknown, T0, T0.plusSeconds(3600), Sku.wholeGpu("MI300X"),
                1, CapacityType.ON_DEMAND));
        topic.send(usage(tenant, job, spot, T0, T0.plusSeconds(3600), Sku.wholeGpu(GpuModels.V100_SXM2_16GB),
                1, CapacityType.SPOT));

        awaitFolded();
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("lines", hasSize(4))
                .body("lines.find { it.sku == 'H100-SXM5-80GB/mig-1g.10gb' }.seconds", equalTo(7200))
                .body("lines.find { it.sku == 'H100-SXM5-80GB/mig-1g.10gb' }.rateMicrosPerHour", equalTo(982_857))
                .body("lines.find { it.sku == 'H100-SXM5-80GB/mig-1g.10gb' }.amountMicros", equalTo(1_965_714))
                .body("lines.find { it.sku == 'A10G/250m' }.amountMicros", equalTo(503_000))
                .body("lines.find { it.sku == 'V100-SXM2-16GB' }.amountMicros", equalTo(930_000))
                .body("lines.find { it.sku == 'V100-SXM2-16GB' }.flag", nullValue())
                .body("lines.find { it.sku == 'MI300X' }.seconds", equalTo(3600))
                .body("lines.find { it.sku == 'MI300X' }.amountMicros", equalTo(0))
                .body("lines.find { it.sku == 'MI300X' }.flag",
                        containsString("held: GPU model 'MI300X' is not in the price catalog"))
                .body("totalMicros", equalTo(1_965_714 + 503_000 + 930_000))
                .body("total", equalTo("3.40"));
    }

    @Test
    void bad_and_hostile_records_are_dead_lettered_with_the_reason_and_the_consumer_goes_on() throws Exception {
        String alloc = unique("alloc");
        UsageEvent good = a100(alloc, 0, 60);
        ObjectNode missingTenant = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(a100(alloc, 60, 120)));
        missingTenant.remove("tenant");
        ProducerRecord<String, byte[]> malformed = withHeaders(raw(alloc, "{\"allocationId\": \"" + alloc + "\", oops"));
        ProducerRecord<String, byte[]> noTenant = withHeaders(raw(alloc, missingTenant.toString()));
        ProducerRecord<String, byte[]> noHeaders = raw(alloc, EventCodec.encodeToString(a100(alloc, 60, 120)));
        UsageEvent otherTenant = usage(unique("t"), job, alloc, T0.plusSeconds(60), T0.plusSeconds(120), A100, 1,
                CapacityType.ON_DEMAND);

        try (TopicTail deadLetters = topic.deadLetters()) {
            topic.send(good);
            topic.sendRaw(malformed);
            topic.sendRaw(noTenant);
            topic.sendRaw(noHeaders);
            topic.send(otherTenant);
            topic.sendRaw(EventRecords.record(Topics.USAGE_EVENTS, alloc, a100(unique("alloc"), 60, 120),
                    UsageTopic.SOURCE));
            // The contract refuses to build such an event, so a hostile producer writes the JSON itself.
            ObjectNode badTenant = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(a100(alloc, 60, 120)));
            badTenant.put("tenant", "Not A Tenant");
            topic.sendRaw(withHeaders(raw(alloc, badTenant.toString())));
            ObjectNode oversized = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(a100(alloc, 60, 120)));
            oversized.put("jobId", "j".repeat(100_000));
            topic.sendRaw(withHeaders(raw(alloc, oversized.toString())));
            ObjectNode backwards = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(a100(alloc, 60, 120)));
            backwards.set("to", backwards.get("from"));
            topic.sendRaw(withHeaders(raw(alloc, backwards.toString())));
            topic.send(a100(alloc, 60, 60 + 365L * 86_400)); // a year-long tick: a broken clock, not a year of usage
            topic.send(a100(alloc, 60, 90)); // same key, same partition: only billed if the consumer went on

            List<ConsumerRecord<String, byte[]>> dead = deadLetters.until(r -> alloc.equals(r.key()),
                    records -> records.size() >= 9, PATIENCE);

            assertThat(dead).hasSize(9);
            assertThat(dead).map(TopicTail::deadLetterReason).satisfiesExactly(
                    reason -> assertThat(reason).contains("usage.events").contains("not valid JSON"),
                    reason -> assertThat(reason).contains("usage.events").contains("'tenant'"),
                    reason -> assertThat(reason).contains("usage.events").contains("'ce_"),
                    reason -> assertThat(reason).contains("conflicts with its first report")
                            .contains("field 'tenant'"),
                    reason -> assertThat(reason).contains("key must be the allocationId"),
                    reason -> assertThat(reason).contains("usage.events").contains("field 'tenant' must be"),
                    reason -> assertThat(reason).contains("usage.events").containsIgnoringCase("length"),
                    reason -> assertThat(reason).contains("usage.events").contains("field 'to' must be after 'from'"),
                    reason -> assertThat(reason).contains("usage.events").contains("PT8760H long")
                            .contains("gpucloud.billing.max-report-length"));
            assertThat(dead).allSatisfy(r -> {
                assertThat(header(r, "dead-letter-topic")).isEqualTo("usage.events");
                assertThat(header(r, "dead-letter-offset")).isNotBlank();
            });
        }
        awaitFolded();
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("lines", hasSize(1))
                .body("lines[0].seconds", equalTo(90));
        // the refused report billed nothing to the tenant it named
        given().get("/invoices/{tenant}", otherTenant.tenant()).then()
                .statusCode(200).body("months", empty());
        given().get("/invoices/{tenant}", tenant).then()
                .statusCode(200).body("months", not(empty()));
    }

    // ------------------------------------------------------------------ poison records (issue #19)
    // One poison record, wherever it fails (decoding, or only at the database inside a snapshot), costs its
    // own dead letter: the records around it and a canary sent after it are billed, and nothing replays.

    @Test
    void usage_dated_a_billion_years_ahead_is_dead_lettered_and_the_canary_bills() throws Exception {
        String before = unique("alloc");
        String poison = unique("alloc");
        String canary = unique("alloc");
        ObjectNode farFuture = (ObjectNode) EventCodec.mapper().readTree(EventCodec.encode(a100(poison, 0, 60)));
        farFuture.put("from", "+1000000000-12-31T00:00:00Z");
        farFuture.put("to", "+1000000000-12-31T00:01:00Z");

        try (TopicTail deadLetters = topic.deadLetters()) {
            topic.send(a100(before, 0, 60));
            topic.sendRaw(withHeaders(raw(poison, farFuture.toString())));
            topic.send(a100(canary, 0, 120));

            List<ConsumerRecord<String, byte[]>> dead = deadLetters.until(r -> poison.equals(r.key()),
                    records -> !records.isEmpty(), PATIENCE);
            assertThat(TopicTail.deadLetterReason(dead.get(0)))
                    .startsWith("usage.events: field 'from' must be within 2020-01-01T00:00:00Z")
                    .contains("+1000000000-12-31T00:00:00Z");
        }
        UsageTopic.awaitFolded(pool, PATIENCE);
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant)
                .then().statusCode(200).body("lines", hasSize(1)).body("lines[0].seconds", equalTo(60 + 120));
    }

    @Test
    void a_record_only_the_database_refuses_is_isolated_and_the_rest_of_its_snapshot_bills() {
        String poisonJob = "job-poison-db-" + unique("x");
        String good1 = unique("alloc");
        String poison = unique("alloc");
        String good2 = unique("alloc");
        String canary = unique("alloc");
        // valid by every limit of the contract; only this database refuses it (a rule the contract does not know)
        pool.query("ALTER TABLE allocation ADD CONSTRAINT test_poison_job CHECK (job_id NOT LIKE 'job-poison-db-%')")
                .execute().await().atMost(PATIENCE);
        try (TopicTail deadLetters = topic.deadLetters()) {
            topic.send(a100(good1, 0, 60));
            topic.send(usage(tenant, poisonJob, poison, T0, T0.plusSeconds(60), A100, 1, CapacityType.ON_DEMAND));
            topic.send(a100(good2, 0, 60));

            List<ConsumerRecord<String, byte[]>> dead = deadLetters.until(r -> poison.equals(r.key()),
                    records -> !records.isEmpty(), PATIENCE);
            assertThat(TopicTail.deadLetterReason(dead.get(0)))
                    .startsWith("usage.events: the database refused the usage of allocation '" + poison + "'")
                    .contains("test_poison_job").contains("SQLSTATE 23514")
                    .doesNotContainIgnoringCase("insert into").doesNotContain("unnest").doesNotContain("\tat ");
            assertThat(TopicTail.header(dead.get(0), "dead-letter-topic")).isEqualTo("usage.events");

            topic.send(a100(canary, 0, 120));
            UsageTopic.awaitFolded(pool, PATIENCE);
        } finally {
            pool.query("ALTER TABLE allocation DROP CONSTRAINT IF EXISTS test_poison_job").execute()
                    .await().atMost(PATIENCE);
        }
        given().queryParam("month", "2025-06").get("/invoices/{tenant}", tenant)
                .then().statusCode(200)
                .body("lines.jobId", hasItem(job))
                .body("lines.find { it.jobId == '" + job + "' }.seconds", equalTo(60 + 60 + 120))
                .body("lines.findAll { it.jobId == '" + poisonJob + "' }", hasSize(0));
    }

    @Test
    void readiness_reports_ingestion_with_its_lag() {
        given().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'billing usage ingestion' }.status", equalTo("UP"));
    }

    private UsageEvent a100(String alloc, long fromSeconds, long toSeconds) {
        return usage(tenant, job, alloc, T0.plusSeconds(fromSeconds), T0.plusSeconds(toSeconds), A100, 1,
                CapacityType.ON_DEMAND);
    }

    /** Waits until every usage record sent so far is folded and its snapshot written. */
    private void awaitFolded() {
        UsageTopic.awaitFolded(pool, PATIENCE);
    }
}
