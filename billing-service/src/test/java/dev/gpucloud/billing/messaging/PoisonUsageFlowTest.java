package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.raw;
import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static dev.gpucloud.billing.messaging.UsageTopic.withHeaders;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One poison usage record, wherever it fails (decoding, or only at the database inside a snapshot), costs
 * its own dead letter: the records around it and a canary sent after it are billed, and nothing replays.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class PoisonUsageFlowTest {

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
        given().header("X-Gpucloud-Tenant", tenant).queryParam("month", "2025-06").get("/invoices/{tenant}", tenant)
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
        given().header("X-Gpucloud-Tenant", tenant).queryParam("month", "2025-06").get("/invoices/{tenant}", tenant)
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
}
