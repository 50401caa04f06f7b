package dev.gpucloud.metrics.messaging;

import static dev.gpucloud.testsupport.RawRecords.withValue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AdvisoryKind;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuAdvisory;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.events.WorkerPlacement;
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
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The platform metrics through the real broker: job, node, allocation and usage events produced with
 * a plain KafkaProducer, series read back from /q/metrics, bad records read back from the dead-letter
 * topics, consumer lag read from the broker. Every id is unique to this run.
 */
@QuarkusTest
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class PlatformFlowTest {

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
    void a_job_placed_on_a_host_shows_as_queue_wait_placement_allocated_gpus_cost_and_gpu_labels() {
        String node = "pf-" + RUN + "-a100";
        String tenant = "t" + RUN;
        String job = "job-" + RUN + "-1";
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node, CapacityType.ON_DEMAND), SOURCE));
        Instant now = Instant.now();
        WorkerPlacement worker = new WorkerPlacement(0, node, List.of(0, 1), "alloc-" + RUN + "-1");
        send(new JobEvent(job, tenant, JobState.PENDING, "waiting for a placement", now, List.of(), null));
        send(new JobEvent(job, tenant, JobState.SCHEDULED, "placed", now.plusSeconds(3), List.of(worker), null));
        send(new JobEvent(job, tenant, JobState.RUNNING, "all workers running", now.plusSeconds(4), List.of(worker),
                null));

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node, sample(node, Instant.now(), 95.0, 30_000), SOURCE));
            String scrape = scrape();
            assertThat(scrape).contains("gpucloud_jobs{state=\"RUNNING\",tenant=\"" + tenant + "\",} 1.0");
            assertThat(scrape).contains("gpucloud_placements_total{tenant=\"" + tenant + "\",} 1.0");
            // 8 GPUs at 8 currency units per hour: 2 GPUs cost 2 per hour.
            assertThat(scrape).contains("gpucloud_tenant_cost_per_hour{tenant=\"" + tenant + "\",} 2.0");
            assertThat(scrape).contains("gpucloud_gpu_allocation{Hostname=\"" + node + "\",UUID=\"GPU-" + node
                    + "-0\",allocation=\"alloc-" + RUN + "-1\",gpu=\"0\",job=\"" + job + "\",node=\"" + node
                    + "\",tenant=\"" + tenant + "\",} 1.0");
            assertThat(scrape).contains("gpucloud_checkpoint_age_max_seconds{tenant=\"" + tenant + "\",}");
        });
        assertThat(value("gpucloud_queue_wait_seconds_count")).isGreaterThanOrEqualTo(1);
        assertThat(scrape()).containsPattern("gpucloud_queue_wait_seconds_bucket\\{le=\"5\\.0\",\\} [1-9]");
        assertThat(value("gpucloud_gpus_allocated{capacity_type=\"ON_DEMAND\",model=\"TEST-GPU-" + RUN + "\",}"))
                .isEqualTo(2.0);
        assertThat(value("gpucloud_gpus_capacity{capacity_type=\"ON_DEMAND\",model=\"TEST-GPU-" + RUN + "\",}"))
                .isEqualTo(8.0);

        send(new JobEvent(job, tenant, JobState.SUCCEEDED, "done", now.plusSeconds(5), List.of(), null));
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(scrape()).doesNotContain("gpucloud_jobs{state=\"RUNNING\",tenant=\"" + tenant + "\"");
            assertThat(scrape()).contains("gpucloud_jobs_finished_total{state=\"SUCCEEDED\",tenant=\"" + tenant
                    + "\",} 1.0");
        });
    }

    @Test
    void memory_past_the_threshold_raises_an_advisory_series_count_and_event() {
        TopicTail advisories = kafka.tail(Topics.GPU_ADVISORIES.name());
        String node = "pf-" + RUN + "-mem";
        String tenant = "m" + RUN;
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node, CapacityType.ON_DEMAND), SOURCE));
        WorkerPlacement worker = new WorkerPlacement(0, node, List.of(0), "alloc-" + RUN + "-mem");
        send(new JobEvent("job-" + RUN + "-mem", tenant, JobState.RUNNING, "running", Instant.now(), List.of(worker),
                null));

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            // 38,000 of 40,960 MiB used: 93%.
            kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, node, sample(node, Instant.now(), 95.0, 38_000), SOURCE));
            String scrape = scrape();
            assertThat(scrape).containsPattern("gpucloud_allocation_advisory\\{allocation=\"alloc-" + RUN
                    + "-mem\",job=\"job-" + RUN + "-mem\",kind=\"memory_pressure\",node=\"" + node + "\",tenant=\""
                    + tenant + "\",\\} 92\\.7");
            assertThat(scrape).contains("gpucloud_advisories_total{kind=\"memory_pressure\",tenant=\"" + tenant
                    + "\",} 1.0");
        });

        List<ConsumerRecord<String, byte[]>> published = advisories.next(
                r -> ("alloc-" + RUN + "-mem").equals(r.key()), 1, PATIENCE);
        GpuAdvisory advisory = TopicTail.decode(Topics.GPU_ADVISORIES, published.get(0));
        assertThat(advisory.kind()).isEqualTo(AdvisoryKind.MEMORY_PRESSURE);
        assertThat(advisory.jobId()).isEqualTo("job-" + RUN + "-mem");
        assertThat(advisory.tenant()).isEqualTo(tenant);
        assertThat(advisory.nodeId()).isEqualTo(node);
        assertThat(advisory.valuePercent()).isCloseTo(92.77, org.assertj.core.data.Offset.offset(0.01));
        assertThat(advisory.thresholdPercent()).isEqualTo(80.0);
        assertThat(TopicTail.header(published.get(0), "ce_type")).isEqualTo("dev.gpucloud.gpu.advisory.v1");
    }

    @Test
    void spot_interruptions_and_usage_are_counted() {
        String node = "pf-" + RUN + "-spot";
        String tenant = "u" + RUN;
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, inventory(node, CapacityType.SPOT), SOURCE));
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(700)).untilAsserted(() -> {
            Instant at = Instant.now();
            kafka.send(EventRecords.record(Topics.NODE_EVENTS, node, new NodeEvent(node,
                    NodeEventType.SPOT_INTERRUPTION, at, at.plusSeconds(120), null, null, "test"), SOURCE));
            // Each report continues the last, so every one that arrives counts 60 GPU-seconds.
            kafka.send(EventRecords.record(Topics.USAGE_EVENTS, "alloc-" + RUN + "-u", new UsageEvent("alloc-" + RUN
                    + "-u", "job-u", tenant, node, at.minusSeconds(60), at, Sku.wholeGpu("A100"), 1, CapacityType.SPOT,
                    "us-east-1a"), SOURCE));
            assertThat(value("gpucloud_node_events_total{capacity_type=\"SPOT\",type=\"SPOT_INTERRUPTION\",}"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(value("gpucloud_usage_gpu_seconds_total{capacity_type=\"SPOT\",tenant=\"" + tenant + "\",}"))
                    .isGreaterThanOrEqualTo(60);
        });
    }

    @Test
    void bad_platform_records_are_dead_lettered_with_their_reason() {
        TopicTail jobDead = kafka.deadLetters(Topics.JOB_EVENTS);
        String wrongKey = "job-" + RUN + "-wrongkey";
        String missing = "job-" + RUN + "-missing";
        kafka.send(EventRecords.record(Topics.JOB_EVENTS, wrongKey, new JobEvent("job-other", "test-tenant", JobState.PENDING,
                null, Instant.now(), List.of(), null), SOURCE));
        kafka.send(withValue(EventRecords.record(Topics.JOB_EVENTS, missing, new JobEvent(missing, "test-tenant",
                JobState.PENDING, null, Instant.now(), List.of(), null), SOURCE),
                "{\"jobId\":\"" + missing + "\",\"state\":\"PENDING\",\"occurredAt\":\"2026-01-01T00:00:00Z\"}"));

        List<ConsumerRecord<String, byte[]>> dead = jobDead.until(r -> Set.of(wrongKey, missing).contains(r.key()),
                seen -> seen.stream().map(ConsumerRecord::key).distinct().count() == 2, PATIENCE);
        Map<String, String> reasons = new java.util.HashMap<>();
        dead.forEach(r -> reasons.put(r.key(), TopicTail.deadLetterReason(r)));
        assertThat(reasons).containsEntry(wrongKey,
                "job.events: key '" + wrongKey + "' differs from field 'jobId' 'job-other'");
        assertThat(reasons).containsEntry(missing, "job.events: missing required field 'tenant'");

        // The consumer goes on.
        String after = "job-" + RUN + "-after";
        String tenant = "a" + RUN;
        send(new JobEvent(after, tenant, JobState.PENDING, "waiting", Instant.now(), List.of(), null));
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(scrape())
                .contains("gpucloud_jobs{state=\"PENDING\",tenant=\"" + tenant + "\",} 1.0"));
    }

    @Test
    void consumer_lag_is_read_from_the_broker_per_group_and_topic() throws Exception {
        String topic = "metrics-service.lag-test";
        String group = "metrics-lag-test-" + RUN;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            if (!admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic)) {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException raced) {
                    // another run created it
                }
            }
            for (int i = 0; i < 3; i++) {
                kafka.send(new ProducerRecord<>(topic, "k", new byte[] {1}));
            }
            TopicPartition p0 = new TopicPartition(topic, 0);
            long end = admin.listOffsets(Map.of(p0, OffsetSpec.latest())).all().get(10, TimeUnit.SECONDS)
                    .get(p0).offset();
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(end - 3)))
                    .all().get(10, TimeUnit.SECONDS);
        }

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(scrape())
                .contains("gpucloud_kafka_consumer_lag{group=\"" + group + "\",topic=\"" + topic + "\",} 3.0"));
        assertThat(value("gpucloud_kafka_consumer_lag_updated")).isGreaterThan(0);
        // Dead-letter topics exist on every broker the services provisioned: their sizes are exported.
        assertThat(scrape()).containsPattern("gpucloud_kafka_dlq_records\\{topic=\"[a-z.]+\\.dlq\",\\} \\d");
    }

    // --- helpers ---

    private void send(JobEvent event) {
        kafka.send(EventRecords.record(Topics.JOB_EVENTS, event.jobId(), event, SOURCE));
    }

    private static String bootstrap() {
        return System.getenv().getOrDefault("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092");
    }

    private static String scrape() {
        return given().accept("text/plain").when().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    /** The value of the series whose name and labels start the line exactly as given; -1 when absent. */
    private static double value(String series) {
        Matcher m = Pattern.compile("^" + Pattern.quote(series) + "\\s+(\\S+)$", Pattern.MULTILINE).matcher(scrape());
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    private static TelemetrySample sample(String node, Instant at, double util, long usedMib) {
        List<GpuReading> gpus = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            gpus.add(new GpuReading(i, "GPU-" + node + "-" + i, "TEST-GPU-" + RUN, null, util, null, usedMib,
                    40_960 - usedMib, 300.0, null, 60, null, null, null, null, null, null, null, null, null, null,
                    List.of()));
        }
        return new TelemetrySample(node, node, at, gpus);
    }

    private static HostInventory inventory(String node, CapacityType capacity) {
        List<GpuDevice> gpus = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            gpus.add(new GpuDevice(i, "GPU-" + node + "-" + i, "TEST-GPU-" + RUN, 40_960, null, 0, false, List.of()));
        }
        return new HostInventory(node, node, "p4d.24xlarge", "us-east-1a", capacity, 8_000_000, 96_000, 1_152_000,
                "fabric-1", List.of(), gpus, List.of(), "simulated", Instant.now());
    }
}
