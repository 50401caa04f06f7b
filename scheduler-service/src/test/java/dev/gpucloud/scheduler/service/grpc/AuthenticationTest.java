package dev.gpucloud.scheduler.service.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import static org.assertj.core.api.Assertions.tuple;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.identity.BearerToken;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import java.nio.charset.StandardCharsets;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The isolation matrix of the scheduler's API (issue 15): every gRPC method against every kind of caller, from
 * one table. A method of JobService or ClusterService without a row fails the test, so a new method cannot ship
 * without saying who may call it. Also: every kind of bad token is UNAUTHENTICATED and reaches nothing.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(TestIssuer.class)
class AuthenticationTest {

    /** Who calls: the columns of the matrix. */
    enum Who { NO_TOKEN, BAD_TOKEN, OTHER_TENANTS_MEMBER, MEMBER, TENANT_ADMIN, FINANCE, OPERATOR }

    private static final Status.Code OK = Status.Code.OK;
    private static final Status.Code UNAUTH = Status.Code.UNAUTHENTICATED;
    private static final Status.Code DENIED = Status.Code.PERMISSION_DENIED;
    private static final Status.Code HIDDEN = Status.Code.NOT_FOUND;

    /** The rows: for each method, what each caller gets (in the order of {@link Who}). */
    private static final Map<String, List<Status.Code>> MATRIX = new LinkedHashMap<>();

    static {
        MATRIX.put("gpucloud.v1.JobService/SubmitJob", List.of(UNAUTH, UNAUTH, DENIED, OK, OK, DENIED, DENIED));
        MATRIX.put("gpucloud.v1.JobService/GetJob", List.of(UNAUTH, UNAUTH, HIDDEN, OK, OK, HIDDEN, OK));
        MATRIX.put("gpucloud.v1.JobService/ListJobs", List.of(UNAUTH, UNAUTH, DENIED, OK, OK, DENIED, OK));
        MATRIX.put("gpucloud.v1.JobService/CancelJob", List.of(UNAUTH, UNAUTH, HIDDEN, OK, OK, HIDDEN, DENIED));
        MATRIX.put("gpucloud.v1.JobService/WatchJob", List.of(UNAUTH, UNAUTH, HIDDEN, OK, OK, HIDDEN, OK));
        MATRIX.put("gpucloud.v1.JobService/StreamLogs", List.of(UNAUTH, UNAUTH, HIDDEN, OK, OK, HIDDEN, OK));
        MATRIX.put("gpucloud.v1.ClusterService/ListNodes", List.of(UNAUTH, UNAUTH, DENIED, DENIED, DENIED, DENIED, OK));
        MATRIX.put("gpucloud.v1.ClusterService/GetCapacity", List.of(UNAUTH, UNAUTH, OK, OK, OK, OK, OK));
        MATRIX.put("gpucloud.v1.ClusterService/GetTenantUsage", List.of(UNAUTH, UNAUTH, DENIED, DENIED, OK, OK, OK));
        MATRIX.put("gpucloud.v1.ClusterService/CordonNode", List.of(UNAUTH, UNAUTH, DENIED, DENIED, DENIED, DENIED, OK));
        MATRIX.put("gpucloud.v1.ClusterService/DrainNode", List.of(UNAUTH, UNAUTH, DENIED, DENIED, DENIED, DENIED, OK));
        // last: the host takes work again
        MATRIX.put("gpucloud.v1.ClusterService/UndrainNode", List.of(UNAUTH, UNAUTH, DENIED, DENIED, DENIED, DENIED, OK));
    }

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    String tenant;
    String otherTenant;
    String model;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        String run = UUID.randomUUID().toString().substring(0, 8);
        tenant = "t-" + run + "a";
        otherTenant = "t-" + run + "b";
        model = "AUTH-" + run;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void every_method_answers_every_caller_as_the_matrix_says() {
        Set<String> methods = new TreeSet<>();
        for (ServiceDescriptor service : List.of(JobServiceGrpc.getServiceDescriptor(),
                ClusterServiceGrpc.getServiceDescriptor())) {
            for (MethodDescriptor<?, ?> m : service.getMethods()) {
                methods.add(m.getFullMethodName());
            }
        }
        assertThat(MATRIX.keySet()).as("a row for every method of the API, and no row for a method that is gone")
                .containsExactlyInAnyOrderElementsOf(methods);
        hostKnown();
        List<String> wrong = new ArrayList<>();
        for (var row : MATRIX.entrySet()) {
            for (Who who : Who.values()) {
                Status.Code expected = row.getValue().get(who.ordinal());
                Status.Code got = call(row.getKey(), who == Who.NO_TOKEN ? null : as(who));
                if (got != expected) {
                    wrong.add(row.getKey() + " as " + who + ": expected " + expected + ", got " + got);
                }
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void a_tenant_admin_reads_its_tenants_quota_and_usage_and_no_other_tenants() {
        hostKnown();
        submit(as(Who.MEMBER), "usage-1");
        submit(as(Who.MEMBER), "usage-2");
        ClusterServiceGrpc.ClusterServiceBlockingStub admin = ClusterServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(as(Who.TENANT_ADMIN)).withDeadlineAfter(30, TimeUnit.SECONDS);

        var usage = admin.getTenantUsage(dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest.getDefaultInstance());

        assertThat(usage.getTenant()).isEqualTo(tenant); // the token's only tenant
        // hostKnown's probe and the two above, each of one GPU, placed or waiting
        assertThat(usage.getRunningJobs() + usage.getPendingJobs()).isEqualTo(3);
        assertThat(usage.getRunningMilli() + usage.getPendingMilli()).isEqualTo(3 * spec().getGpusPerWorker() * 1000L);
        assertThat(usage.getWeight()).isPositive();
        var other = statusOf(() -> admin.getTenantUsage(dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest
                .newBuilder().setTenant(otherTenant).build()));
        assertThat(other.getCode()).isEqualTo(DENIED);
        assertThat(other.getDescription()).contains("may not read the quota and usage of tenant '" + otherTenant + "'");
        var malformed = statusOf(() -> admin.getTenantUsage(dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest
                .newBuilder().setTenant("../etc").build()));
        assertThat(malformed.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    }

    /** The host {@link #hostKnown} makes known. */
    private String node() {
        return "auth-" + model.toLowerCase();
    }

    @Test
    void an_operator_cordons_drains_and_undrains_a_host_and_every_attempt_is_audited() {
        hostKnown();
        String node = node();
        try (TestKafka kafka = new TestKafka(); TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name())) {
            ClusterServiceGrpc.ClusterServiceBlockingStub op = ClusterServiceGrpc.newBlockingStub(channel)
                    .withCallCredentials(as(Who.OPERATOR)).withDeadlineAfter(30, TimeUnit.SECONDS);
            var denied = statusOf(() -> ClusterServiceGrpc.newBlockingStub(channel).withCallCredentials(
                    as(Who.TENANT_ADMIN)).withDeadlineAfter(30, TimeUnit.SECONDS).cordonNode(
                    CordonNodeRequest.newBuilder().setNodeId(node).setReason("mine now").build()));
            assertThat(denied.getCode()).isEqualTo(DENIED);
            assertThat(denied.getDescription()).contains("may not cordon hosts: that takes the role operator");

            var cordoned = op.cordonNode(CordonNodeRequest.newBuilder().setNodeId(node).setReason("replace NIC").build());
            var again = op.cordonNode(CordonNodeRequest.newBuilder().setNodeId(node).setReason("replace NIC").build());

            assertThat(cordoned.getChanged()).isTrue();
            assertThat(again.getChanged()).as("a repeat changes nothing").isFalse();
            assertThat(cordoned.getNode().getDraining()).isTrue();
            assertThat(cordoned.getNode().getHealthy()).isFalse();
            assertThat(cordoned.getNode().getCordonReason()).isEqualTo("replace NIC");
            var listed = op.listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodes(0);
            assertThat(listed.getCordonReason()).isEqualTo("replace NIC");
            var drained = op.drainNode(DrainNodeRequest.newBuilder().setNodeId(node).setReason("RMA").build());
            assertThat(drained.getNode().getCordonReason()).isEqualTo("RMA");
            var undrained = op.undrainNode(UndrainNodeRequest.newBuilder().setNodeId(node).build());
            assertThat(undrained.getChanged()).isTrue();
            assertThat(undrained.getNode().getDraining()).isFalse();
            assertThat(undrained.getNode().getCordonReason()).isEmpty();
            assertThat(op.undrainNode(UndrainNodeRequest.newBuilder().setNodeId(node).build()).getChanged()).isFalse();

            // bad input: each refused with what is wrong, nothing changed
            Map<String, Runnable> bad = new LinkedHashMap<>();
            bad.put("field 'node_id' must not be blank", () -> op.cordonNode(CordonNodeRequest.newBuilder()
                    .setReason("x").build()));
            bad.put("field 'reason' must not be blank", () -> op.cordonNode(CordonNodeRequest.newBuilder()
                    .setNodeId(node).setReason(" ").build()));
            bad.put("field 'reason' must be one line of text", () -> op.drainNode(DrainNodeRequest.newBuilder()
                    .setNodeId(node).setReason("a\nb").build()));
            bad.put("field 'grace_seconds' must be within 0..86400", () -> op.drainNode(DrainNodeRequest.newBuilder()
                    .setNodeId(node).setReason("x").setGraceSeconds(86_401).build()));
            bad.put("field 'node_id' must be at most 128 characters", () -> op.cordonNode(CordonNodeRequest.newBuilder()
                    .setNodeId("n".repeat(129)).setReason("x").build()));
            bad.put("host '../etc/passwd' is not known to the scheduler", () -> op.cordonNode(
                    CordonNodeRequest.newBuilder().setNodeId("../etc/passwd").setReason("x").build()));
            bad.put("host 'x' or 1=1 --' is not known to the scheduler", () -> op.undrainNode(
                    UndrainNodeRequest.newBuilder().setNodeId("x' or 1=1 --").build()));
            bad.forEach((message, call) -> assertThat(statusOf(call).getDescription()).as(message).contains(message));
            assertThat(statusOf(bad.get("host '../etc/passwd' is not known to the scheduler")).getCode())
                    .isEqualTo(HIDDEN);
            assertThat(op.listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodes(0)
                    .getDraining()).isFalse();

            // the tests of this class run one at a time: every record from here on is this test's
            List<AuditEvent> records = audit.until(r -> true, found -> found.size() >= 6 + bad.size() + 1,
                            Duration.ofSeconds(20)).stream()
                    .map(r -> EventRecords.decode(Topics.AUDIT_EVENTS, r).payload())
                    .sorted(java.util.Comparator.comparing(AuditEvent::occurredAt)).toList();
            assertThat(records).extracting(AuditEvent::action, AuditEvent::subject, AuditEvent::result)
                    .startsWith(
                            tuple("scheduler.CordonNode", "ann", "PERMISSION_DENIED"),
                            tuple("scheduler.CordonNode", "op", "OK"),
                            tuple("scheduler.CordonNode", "op", "OK"),
                            tuple("scheduler.DrainNode", "op", "OK"),
                            tuple("scheduler.UndrainNode", "op", "OK"),
                            tuple("scheduler.UndrainNode", "op", "OK"));
            assertThat(records.get(1).target()).isEqualTo("host " + node + ": replace NIC");
            assertThat(records.subList(6, records.size())).extracting(AuditEvent::result)
                    .containsOnly("INVALID_ARGUMENT", "NOT_FOUND");
        }
    }

    /** Makes a host the scheduler's jobs fit on known to it. */
    private void hostKnown() {
        try (TestKafka kafka = new TestKafka()) {
            String node = node();
            List<GpuDevice> devices = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                devices.add(new GpuDevice(i, node + "-" + i, model, 40_960, null, 0, false, List.of()));
            }
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, new HostInventory(node, node + ".test",
                    "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND, 21_960_000, 96_000, 1_000_000, "a", List.of(),
                    devices, List.of(), "simulated", Instant.now()), "test"));
        }
        CallCredentials member = as(Who.MEMBER);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            try {
                submit(member, "probe");
                return true;
            } catch (StatusRuntimeException notYet) {
                return false;
            }
        });
        // a scheduler just started may still be reading older hosts and accept before it knows this one
        ClusterServiceGrpc.ClusterServiceBlockingStub operator = ClusterServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(as(Who.OPERATOR));
        await().atMost(Duration.ofSeconds(60)).until(() -> operator.withDeadlineAfter(30, TimeUnit.SECONDS)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
    }

    @Test
    void a_member_lists_only_its_own_tenants_jobs_and_submits_without_naming_its_tenant() {
        JobServiceGrpc.JobServiceBlockingStub jobs = JobServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(as(Who.MEMBER)).withDeadlineAfter(30, TimeUnit.SECONDS);
        // its only tenant is taken from the token
        var job = jobs.submitJob(SubmitJobRequest.newBuilder().setClientRequestId(UUID.randomUUID().toString())
                .setSpec(spec()).build()).getJob();
        assertThat(job.getTenant()).isEqualTo(tenant);
        var mine = jobs.listJobs(ListJobsRequest.getDefaultInstance()).getJobsList();
        assertThat(mine).isNotEmpty().allSatisfy(j -> assertThat(j.getTenant()).isEqualTo(tenant));
        // the other tenant's member sees none of it, and the job's id is no more than an unknown one
        JobServiceGrpc.JobServiceBlockingStub other = JobServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(as(Who.OTHER_TENANTS_MEMBER)).withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThat(other.listJobs(ListJobsRequest.getDefaultInstance()).getJobsList())
                .noneSatisfy(j -> assertThat(j.getTenant()).isEqualTo(tenant));
        String hidden = statusOf(() -> other.getJob(GetJobRequest.newBuilder().setJobId(job.getJobId()).build()))
                .getDescription().replace(job.getJobId(), "ID");
        String unknown = statusOf(() -> other.getJob(GetJobRequest.newBuilder().setJobId("job-nonexistent").build()))
                .getDescription().replace("job-nonexistent", "ID");
        assertThat(hidden).isEqualTo(unknown);
        assertThat(statusOf(() -> other.cancelJob(CancelJobRequest.newBuilder().setJobId(job.getJobId()).build()))
                .getCode()).isEqualTo(HIDDEN);
        assertThat(jobs.getJob(GetJobRequest.newBuilder().setJobId(job.getJobId()).build()).getState())
                .isNotEqualTo(dev.gpucloud.contracts.grpc.v1.JobState.CANCELLED);
    }

    @Test
    void the_audit_trail_names_the_verified_caller_and_records_refusals_before_and_after_the_token() {
        try (TestKafka kafka = new TestKafka(); TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name())) {
            JobServiceGrpc.JobServiceBlockingStub jobs = JobServiceGrpc.newBlockingStub(channel)
                    .withCallCredentials(as(Who.MEMBER)).withDeadlineAfter(30, TimeUnit.SECONDS);
            String id = jobs.submitJob(SubmitJobRequest.newBuilder().setClientRequestId(UUID.randomUUID().toString())
                    .setSpec(spec()).build()).getJob().getJobId();
            CancelJobRequest cancel = CancelJobRequest.newBuilder().setJobId(id).build();
            statusOf(() -> JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .cancelJob(cancel));
            statusOf(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(as(Who.BAD_TOKEN))
                    .withDeadlineAfter(30, TimeUnit.SECONDS).cancelJob(cancel));
            statusOf(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(as(Who.OTHER_TENANTS_MEMBER))
                    .withDeadlineAfter(30, TimeUnit.SECONDS).cancelJob(cancel));
            statusOf(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(as(Who.OPERATOR))
                    .withDeadlineAfter(30, TimeUnit.SECONDS).cancelJob(cancel));
            jobs.cancelJob(cancel);

            // the tests of this class run one at a time: every record from here on is this test's
            List<AuditEvent> records = audit.until(r -> true, found -> found.size() >= 6, Duration.ofSeconds(20))
                    .stream()
                    .map(r -> EventRecords.decode(Topics.AUDIT_EVENTS, r).payload())
                    // keyed by tenant, the records come from several partitions: in the order of the calls
                    .sorted(java.util.Comparator.comparing(AuditEvent::occurredAt)).toList();
            assertThat(records).extracting(AuditEvent::action, AuditEvent::subject, AuditEvent::result)
                    .containsExactly(
                            tuple("scheduler.SubmitJob", "alice", "OK"),
                            tuple("scheduler.CancelJob", "(anonymous)", "UNAUTHENTICATED"),
                            tuple("scheduler.CancelJob", "(anonymous)", "UNAUTHENTICATED"),
                            tuple("scheduler.CancelJob", "bob", "NOT_FOUND"),
                            tuple("scheduler.CancelJob", "op", "PERMISSION_DENIED"),
                            tuple("scheduler.CancelJob", "alice", "OK"));
            assertThat(records.get(0).roles()).containsExactly("member");
            assertThat(records.get(0).tenant()).isEqualTo(tenant);
            assertThat(records.get(1).reason()).startsWith("no bearer token");
            assertThat(records.get(1).target()).as("refused before the request was read").isEmpty();
            assertThat(records.get(3).target()).isEqualTo(id);
            assertThat(records.get(3).tenant()).as("the caller's tenant, not the job's").isEqualTo(otherTenant);
            assertThat(records.get(4).roles()).containsExactly("operator");
            assertThat(audit.matching(r -> true)).as("no token in any record").allSatisfy(
                    r -> assertThat(new String(r.value(), StandardCharsets.UTF_8)).doesNotContain("eyJ"));
        }
    }

    @Test
    void every_bad_token_is_unauthenticated_with_what_is_wrong() {
        DevIssuer issuer = TestIssuer.issuer();
        Instant now = Instant.now();
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("expired", issuer.sign(claims(now.minus(Duration.ofHours(2)), Duration.ofHours(1))));
        bad.put("not yet valid", issuer.sign(with(claims(now, Duration.ofHours(1)),
                c -> c.setNotBefore(org.jose4j.jwt.NumericDate.fromSeconds(now.plus(Duration.ofHours(1)).getEpochSecond())))));
        bad.put("wrong audience", issuer.sign(with(claims(now, Duration.ofHours(1)), c -> c.setAudience("someone-else"))));
        bad.put("wrong issuer", issuer.sign(with(claims(now, Duration.ofHours(1)), c -> c.setIssuer("https://evil.example"))));
        bad.put("another key", DevIssuer.inMemory(issuer.issuer()).sign(claims(now, Duration.ofHours(1))));
        String good = issuer.sign(claims(now, Duration.ofHours(1)));
        String[] parts = good.split("\\.");
        String unsignedPayload = parts[1];
        bad.put("alg none", Base64.getUrlEncoder().withoutPadding().encodeToString(
                "{\"alg\":\"none\",\"typ\":\"JWT\"}".getBytes()) + "." + unsignedPayload + ".");
        String tampered = new String(Base64.getUrlDecoder().decode(parts[1])).replace(tenant, otherTenant);
        bad.put("tampered", parts[0] + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(tampered.getBytes())
                + "." + parts[2]);
        bad.put("oversized", "x".repeat(Authentication.MAX_TOKEN_CHARS + 1));
        bad.put("not a JWT", "hello");
        bad.put("no tenant claim", issuer.mint("alice", List.of(), List.of("member"), Duration.ofHours(1)));
        bad.put("malformed tenant", issuer.mint("alice", List.of("Acme'; drop table jobs;--"), List.of("member"),
                Duration.ofHours(1)));
        for (var e : bad.entrySet()) {
            Status status = statusOf(() -> ClusterServiceGrpc.newBlockingStub(channel)
                    .withCallCredentials(new BearerToken(e.getValue())).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getCapacity(GetCapacityRequest.getDefaultInstance()));
            assertThat(status.getCode()).as(e.getKey() + ": " + status).isEqualTo(UNAUTH);
            assertThat(status.getDescription()).as(e.getKey()).contains("gpucloud login");
        }
        // past the transport's header limit, the transport refuses it before the service sees the call
        assertThat(statusOf(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(new BearerToken("x".repeat(64 * 1024))).withDeadlineAfter(30, TimeUnit.SECONDS)
                .getCapacity(GetCapacityRequest.getDefaultInstance())).getCode()).isNotEqualTo(OK);
        assertThat(statusOf(() -> ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .getCapacity(GetCapacityRequest.getDefaultInstance())).getDescription()).startsWith("no bearer token");
        // the good one passes, so what failed above was the token
        ClusterServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(good))
                .withDeadlineAfter(30, TimeUnit.SECONDS).getCapacity(GetCapacityRequest.getDefaultInstance());
    }

    // ------------------------------------------------------------------ helpers

    private JwtClaims claims(Instant now, Duration ttl) {
        return TestIssuer.issuer().claims("alice", List.of(tenant), List.of("member"), now, ttl);
    }

    private static JwtClaims with(JwtClaims claims, java.util.function.Consumer<JwtClaims> change) {
        change.accept(claims);
        return claims;
    }

    private CallCredentials as(Who who) {
        return new BearerToken(switch (who) {
            case NO_TOKEN -> throw new IllegalArgumentException("no token");
            case BAD_TOKEN -> DevIssuer.inMemory(TestIssuer.issuer().issuer())
                    .mint("mallory", List.of(tenant), List.of("operator", "member"), Duration.ofHours(1));
            case OTHER_TENANTS_MEMBER -> TestIssuer.token("bob", List.of(otherTenant), List.of("member"));
            case MEMBER -> TestIssuer.token("alice", List.of(tenant), List.of("member"));
            case TENANT_ADMIN -> TestIssuer.token("ann", List.of(tenant), List.of("tenant-admin"));
            case FINANCE -> TestIssuer.token("fin", List.of(), List.of("finance"));
            case OPERATOR -> TestIssuer.token("op", List.of(), List.of("operator"));
        });
    }

    private JobSpec spec() {
        return JobSpec.newBuilder().setName("auth").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                .addCommand("sleep").addCommand("600").build();
    }

    private String submit(CallCredentials credentials, String name) {
        return JobServiceGrpc.newBlockingStub(channel).withCallCredentials(credentials)
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .submitJob(SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId(UUID.randomUUID().toString())
                        .setSpec(spec().toBuilder().setName(name)).build()).getJob().getJobId();
    }

    /** Calls {@code method} as the given credentials (null: none), on a job of {@link #tenant} where it takes one. */
    private Status.Code call(String method, CallCredentials credentials) {
        JobServiceGrpc.JobServiceBlockingStub jobs = JobServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        ClusterServiceGrpc.ClusterServiceBlockingStub cluster = ClusterServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        if (credentials != null) {
            jobs = jobs.withCallCredentials(credentials);
            cluster = cluster.withCallCredentials(credentials);
        }
        var j = jobs;
        var c = cluster;
        String job = submit(as(Who.MEMBER), "target");
        Function<String, Runnable> calls = m -> switch (m) {
            case "gpucloud.v1.JobService/SubmitJob" -> () -> j.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                    .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec()).build());
            case "gpucloud.v1.JobService/GetJob" -> () -> j.getJob(GetJobRequest.newBuilder().setJobId(job).build());
            case "gpucloud.v1.JobService/ListJobs" -> () -> j.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).build());
            case "gpucloud.v1.JobService/CancelJob" -> () -> j.cancelJob(CancelJobRequest.newBuilder().setJobId(job).build());
            case "gpucloud.v1.JobService/WatchJob" -> () -> j.watchJob(WatchJobRequest.newBuilder().setJobId(job).build())
                    .next();
            case "gpucloud.v1.JobService/StreamLogs" -> () -> {
                try {
                    j.streamLogs(StreamLogsRequest.newBuilder().setJobId(job).build()).hasNext();
                } catch (StatusRuntimeException e) {
                    // past its access check, a job that has not run yet has no output: that is not a refusal
                    if (e.getStatus().getCode() != Status.Code.FAILED_PRECONDITION) {
                        throw e;
                    }
                }
            };
            case "gpucloud.v1.ClusterService/ListNodes" -> () -> c.listNodes(ListNodesRequest.getDefaultInstance());
            case "gpucloud.v1.ClusterService/GetCapacity" -> () -> c.getCapacity(GetCapacityRequest.getDefaultInstance());
            case "gpucloud.v1.ClusterService/GetTenantUsage" -> () -> c.getTenantUsage(
                    dev.gpucloud.contracts.grpc.v1.GetTenantUsageRequest.newBuilder().setTenant(tenant).build());
            case "gpucloud.v1.ClusterService/CordonNode" -> () -> c.cordonNode(
                    CordonNodeRequest.newBuilder().setNodeId(node()).setReason("matrix").build());
            case "gpucloud.v1.ClusterService/DrainNode" -> () -> c.drainNode(
                    DrainNodeRequest.newBuilder().setNodeId(node()).setReason("matrix").setGraceSeconds(60).build());
            case "gpucloud.v1.ClusterService/UndrainNode" -> () -> c.undrainNode(
                    UndrainNodeRequest.newBuilder().setNodeId(node()).build());
            default -> throw new AssertionError("no call for " + m);
        };
        try {
            calls.apply(method).run();
            return OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    private static Status statusOf(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
        throw new AssertionError("the call succeeded");
    }

}
