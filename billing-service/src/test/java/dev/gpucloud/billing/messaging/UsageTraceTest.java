package dev.gpucloud.billing.messaging;

import static dev.gpucloud.billing.messaging.UsageTopic.unique;
import static dev.gpucloud.billing.messaging.UsageTopic.usage;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.tracing.LoggedSpan;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * Billing's part of a job's trace: a usage record whose traceparent names the agent's publish span is folded in a
 * child of that span, which says what the usage became (tenant, job, allocation, SKU, units, seconds, the invoice's
 * month); a record outside any trace, or with a traceparent that cannot be read, is billed as ever and makes no span.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_billing_test"))
class UsageTraceTest {

    private static final Sku A100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
    private static final Instant T0 = Instant.parse("2025-07-01T10:00:00Z");
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final Path SPAN_LOG = Path.of("target/spans/billing.jsonl");
    private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";
    private static final String AGENT_SPAN = "b7ad6b7169203331";

    @Inject
    Pool pool;

    private static ProducerRecord<String, byte[]> record(UsageEvent usage, String traceparent) {
        ProducerRecord<String, byte[]> record = EventRecords.record(Topics.USAGE_EVENTS, usage.allocationId(), usage,
                CloudEvent.create(Topics.USAGE_EVENTS.eventType(), UsageTopic.SOURCE, Instant.now()));
        if (traceparent != null) {
            record.headers().add(Traceparent.HEADER, traceparent.getBytes(StandardCharsets.UTF_8));
        }
        return record;
    }

    @Test
    void a_traced_usage_record_is_folded_in_its_trace_and_untraced_or_garbled_ones_are_billed_as_ever() {
        String tenant = unique("t");
        String job = unique("job");
        UsageEvent traced = usage(tenant, job, unique("traced"), T0, T0.plusSeconds(120), A100, 2, CapacityType.ON_DEMAND);
        UsageEvent untraced = usage(tenant, job, unique("untraced"), T0, T0.plusSeconds(120), A100, 2,
                CapacityType.ON_DEMAND);
        UsageEvent garbled = usage(tenant, job, unique("garbled"), T0, T0.plusSeconds(120), A100, 2,
                CapacityType.ON_DEMAND);

        try (UsageTopic topic = new UsageTopic()) {
            topic.sendRaw(record(traced, "00-" + TRACE + "-" + AGENT_SPAN + "-01"));
            topic.sendRaw(record(untraced, null));
            topic.sendRaw(record(garbled, "00-" + TRACE + "-" + AGENT_SPAN + "-zz"));
            UsageTopic.awaitFolded(pool, PATIENCE);
        }

        // all three are billed: 3 allocations x 2 GPUs x 120 s on one line of the job
        given().queryParam("month", "2025-07").get("/invoices/{tenant}", tenant).then()
                .statusCode(200)
                .body("lines", hasSize(1))
                .body("lines[0].jobId", equalTo(job))
                .body("lines[0].seconds", equalTo(720));

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            List<LoggedSpan> spans = LoggedSpan.read(SPAN_LOG).spans();
            LoggedSpan fold = spans.stream().filter(s -> s.name().equals("usage.events fold")
                    && traced.allocationId().equals(s.attribute("allocation_id"))).findFirst().orElseThrow();
            assertThat(fold.traceId()).isEqualTo(TRACE);
            assertThat(fold.parentSpanId()).isEqualTo(AGENT_SPAN);
            assertThat(fold.kind()).isEqualTo("CONSUMER");
            assertThat(fold.service()).isEqualTo("billing");
            assertThat(fold.attribute("tenant")).isEqualTo(tenant);
            assertThat(fold.attribute("job_id")).isEqualTo(job);
            assertThat(fold.attribute("sku")).isEqualTo("A100-SXM4-40GB");
            assertThat(fold.attribute("units")).isEqualTo("2");
            assertThat(fold.attribute("seconds")).isEqualTo("120");
            assertThat(fold.attribute("invoice.month")).isEqualTo("2025-07");
            assertThat(spans).noneMatch(s -> untraced.allocationId().equals(s.attribute("allocation_id"))
                    || garbled.allocationId().equals(s.attribute("allocation_id")));
        });
    }
}
