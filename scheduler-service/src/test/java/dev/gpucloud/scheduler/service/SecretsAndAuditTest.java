package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Secret job variables and the audit trail, over real gRPC, a real broker and a real database: a secret value
 * reaches the START command of its worker and nothing else a client or a consumer of job.events or audit.events
 * can read, and every SubmitJob and CancelJob, accepted or refused, leaves one audit record.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(SecretsAndAuditTest.SecretsKey.class)
class SecretsAndAuditTest {

    /** A key file of one fresh key, as ./gpucloud up makes: the secrets are sealed at rest in this test. */
    public static class SecretsKey implements io.quarkus.test.common.QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            try {
                java.nio.file.Path file = java.nio.file.Files.createTempFile("gpucloud-secrets", ".key");
                byte[] key = new byte[32];
                new java.security.SecureRandom().nextBytes(key);
                java.nio.file.Files.writeString(file, java.util.Base64.getEncoder().encodeToString(key) + "\n");
                file.toFile().deleteOnExit();
                return Map.of("gpucloud.scheduler.secrets-key-file", file.toString());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }

    /** A value that must never be seen outside the worker's START command. */
    private static final String SECRET = "hunter2-" + UUID.randomUUID();

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    String model;
    String tenant;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        kafka = new TestKafka();
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "TEST-" + run;
        tenant = "t-" + run;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    JobSpec.Builder spec() {
        return JobSpec.newBuilder().setName("train").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                .addCommand("sleep").addCommand("5").putEnv("MODE", "fast");
    }

    SubmitJobRequest request(JobSpec.Builder spec) {
        return SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId(UUID.randomUUID().toString())
                .setSpec(spec).build();
    }

    HostInventory host(String nodeId) {
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(),
                List.of(new GpuDevice(0, nodeId + "-0", model, 40_960, null, 0, false, List.of())), List.of(),
                "simulated", Instant.now());
    }

    static String text(ConsumerRecord<String, byte[]> record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }

    static List<AuditEvent> audits(TopicTail tail, String target, int count) {
        return tail.until(r -> text(r).contains(target), found -> found.size() >= count, Duration.ofSeconds(20))
                .stream().map(r -> EventRecords.decode(Topics.AUDIT_EVENTS, r).payload()).toList();
    }

    @Test
    void a_secret_reaches_the_workers_start_command_also_after_a_requeue_and_no_reader_of_the_job() {
        String nodeId = "node-" + model;
        TopicTail commands = kafka.tail(Topics.NODE_COMMANDS.name());
        TopicTail jobEvents = kafka.tail(Topics.JOB_EVENTS.name());
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);

        Job submitted = jobs.submitJob(request(spec().putSecretEnv("WANDB_API_KEY", SECRET))).getJob();
        String id = submitted.getJobId();
        Iterator<JobEvent> watch = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .watchJob(WatchJobRequest.newBuilder().setJobId(id).build());

        // the worker's START carries it, apart from the plain variables
        ConsumerRecord<String, byte[]> startRecord = commands.next(r -> r.key().equals(nodeId), 1,
                Duration.ofSeconds(20)).get(0);
        NodeCommand start = EventRecords.decode(Topics.NODE_COMMANDS, startRecord).payload();
        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        assertThat(start.secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", SECRET));
        assertThat(start.env()).containsExactly(Map.entry("MODE", "fast"));

        // a lost worker requeues the job; its next START, built from the stored spec, carries the secret again
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id,
                nodeId, AllocationEventType.STARTED, Instant.now(), null, null, null), "test"));
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id,
                nodeId, AllocationEventType.LOST, Instant.now(), null, null, "test: the host lost it"), "test"));
        NodeCommand again = commands.until(r -> r.key().equals(nodeId) && text(r).contains("\"START\""),
                        found -> found.size() >= 2, Duration.ofSeconds(30)).stream()
                .map(r -> EventRecords.decode(Topics.NODE_COMMANDS, r).payload())
                .filter(c -> !c.allocationId().equals(start.allocationId())).findFirst().orElseThrow();
        assertThat(again.secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", SECRET));

        // the database holds it sealed: the row, and so its backups, have no secret in the clear
        String url = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.datasource.jdbc.url", String.class);
        try (var c = java.sql.DriverManager.getConnection(url, "gpucloud", "gpucloud");
                var st = c.prepareStatement("select spec_json from jobs where id = ?")) {
            st.setString(1, id);
            try (var rows = st.executeQuery()) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).doesNotContain(SECRET).contains("\"WANDB_API_KEY\":\"gpucloud:sealed:v1:");
            }
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
        // a repeat of the request with the same secret is the same job; with another secret, a conflict
        SubmitJobRequest first = request(spec().putSecretEnv("WANDB_API_KEY", SECRET));
        String firstId = jobs.submitJob(first).getJob().getJobId();
        assertThat(jobs.submitJob(first).getJob().getJobId()).isEqualTo(firstId);
        SubmitJobRequest changed = first.toBuilder().setSpec(spec().putSecretEnv("WANDB_API_KEY", SECRET + "x")).build();
        assertThatThrownBy(() -> jobs.submitJob(changed)).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS));
        jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(firstId).build());

        // the API shows the name, never the value
        Job read = jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
        assertThat(read.getSpec().getSecretEnvMap()).containsExactly(Map.entry("WANDB_API_KEY", "(secret)"));
        assertThat(read.getSpec().getEnvMap()).containsExactly(Map.entry("MODE", "fast"));
        assertThat(submitted.toString()).doesNotContain(SECRET);
        assertThat(read.toString()).doesNotContain(SECRET);
        assertThat(jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).build()).toByteString()
                .toStringUtf8()).contains("WANDB_API_KEY").doesNotContain(SECRET);

        Job cancelled = jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(id).setReason("done").build());
        assertThat(cancelled.toString()).doesNotContain(SECRET);
        List<JobEvent> watched = new ArrayList<>();
        watch.forEachRemaining(watched::add);
        assertThat(watched).isNotEmpty().allSatisfy(e -> assertThat(e.toString()).doesNotContain(SECRET));

        // job.events has the job's lifecycle and no secret
        List<ConsumerRecord<String, byte[]>> events = jobEvents.until(r -> id.equals(r.key()),
                found -> found.stream().anyMatch(r -> text(r).contains("CANCELLED")), Duration.ofSeconds(20));
        assertThat(events).allSatisfy(r -> assertThat(text(r)).doesNotContain(SECRET));

        // one audit record for the submission and one for the cancel, neither with the secret
        List<AuditEvent> recorded = audits(audit, id, 2);
        assertThat(recorded).extracting(AuditEvent::action)
                .containsExactlyInAnyOrder("scheduler.SubmitJob", "scheduler.CancelJob");
        assertThat(recorded).allSatisfy(a -> {
            assertThat(a.result()).isEqualTo(AuditEvent.OK);
            assertThat(a.tenant()).isEqualTo(tenant);
            assertThat(a.target()).isEqualTo(id);
            assertThat(a.subject()).isEqualTo("(authentication off)");
            assertThat(a.from()).startsWith("127.0.0.1:");
        });
        assertThat(audit.matching(r -> text(r).contains(id)))
                .allSatisfy(r -> {
                    assertThat(text(r)).doesNotContain(SECRET);
                    assertThat(r.key()).isEqualTo(tenant);
                    assertThat(TopicTail.header(r, "ce_type")).isEqualTo("dev.gpucloud.audit.v1");
                    assertThat(TopicTail.header(r, "ce_source")).isNotBlank();
                });
    }

    static Stream<Arguments> badSecrets() {
        return Stream.of(
                Arguments.of("a name that is not a variable name", Map.of("1-KEY", SECRET),
                        "field 'spec.secretEnv' has an invalid name '1-KEY'"),
                Arguments.of("a name that env also sets", Map.of("MODE", SECRET),
                        "field 'spec.secretEnv' names 'MODE', which spec.env also sets"),
                Arguments.of("an oversized value", Map.of("TOKEN", SECRET + "x".repeat(5000)),
                        "field 'spec.secretEnv[TOKEN]' holds"),
                Arguments.of("a NUL in a value", Map.of("TOKEN", SECRET + "\0"),
                        "field 'spec.secretEnv[TOKEN]' holds a NUL character"),
                Arguments.of("a value that looks sealed at rest", Map.of("TOKEN", "gpucloud:sealed:v1:" + SECRET),
                        "field 'spec.secretEnv[TOKEN]' begins with 'gpucloud:sealed:'"),
                Arguments.of("a value that looks sealed for an agent",
                        Map.of("TOKEN", "gpucloud:agent-sealed:v1:a1:" + SECRET),
                        "field 'spec.secretEnv[TOKEN]' begins with 'gpucloud:agent-sealed:'"));
    }

    @ParameterizedTest(name = "a secret with {0} is INVALID_ARGUMENT, audited, and never quoted")
    @MethodSource("badSecrets")
    void a_bad_secret_is_refused_naming_what_is_wrong_without_its_value(String name, Map<String, String> secrets,
            String message) {
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());
        SubmitJobRequest request = request(spec().putAllSecretEnv(secrets));

        assertThatThrownBy(() -> jobs.submitJob(request)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains(message).doesNotContain(SECRET);
        });
        AuditEvent refused = audits(audit, request.getClientRequestId(), 1).get(0);
        assertThat(refused.action()).isEqualTo("scheduler.SubmitJob");
        assertThat(refused.result()).isEqualTo("INVALID_ARGUMENT");
        assertThat(refused.reason()).contains(message).doesNotContain(SECRET);
        assertThat(refused.target()).isEqualTo("request " + request.getClientRequestId());
        assertThat(refused.tenant()).isEqualTo(tenant);
    }

    @Test
    void a_refused_cancel_is_audited_with_its_status_and_a_hostile_tenant_never_becomes_a_key() {
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());
        String unknown = "job-" + UUID.randomUUID();

        assertThatThrownBy(() -> jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(unknown).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        AuditEvent notFound = audits(audit, unknown, 1).get(0);
        assertThat(notFound.action()).isEqualTo("scheduler.CancelJob");
        assertThat(notFound.result()).isEqualTo("NOT_FOUND");
        assertThat(notFound.target()).isEqualTo(unknown);

        SubmitJobRequest hostile = request(spec()).toBuilder().setTenant("a'; drop table jobs;--").build();
        assertThatThrownBy(() -> jobs.submitJob(hostile)).isInstanceOf(StatusRuntimeException.class);
        List<ConsumerRecord<String, byte[]>> records = audit.until(
                r -> text(r).contains(hostile.getClientRequestId()), found -> !found.isEmpty(), Duration.ofSeconds(20));
        assertThat(records.get(0).key()).isEqualTo("-");
        AuditEvent refused = EventRecords.decode(Topics.AUDIT_EVENTS, records.get(0)).payload();
        assertThat(refused.result()).isEqualTo("INVALID_ARGUMENT");
        assertThat(refused.tenant()).isEmpty();
    }
}
