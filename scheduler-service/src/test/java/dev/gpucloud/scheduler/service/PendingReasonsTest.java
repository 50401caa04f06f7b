package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobArray;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Why queued jobs wait, at queue sizes users reach with one array: an array of thousands is accepted in one call,
 * thousands of reasons are stored by a pass (in batches), and a takeover does not rewrite the reasons the rows
 * already hold, which for a large queue held the first pass's transaction, and every submission behind it, for
 * longer than a call may wait.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class PendingReasonsTest {

    /** More than one batch of {@code PendingReasons}. */
    static final int QUEUED = 2_500;

    @TestHTTPResource("/")
    URL url;

    @jakarta.inject.Inject
    SchedulerEngine engine;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub stub;
    String model;
    String tenant;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        stub = JobServiceGrpc.newBlockingStub(channel);
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "A100-REASONS-TEST-" + run; // no host has it: every job waits
        tenant = "t-" + run;
    }

    /** The suite's later classes share this scheduler: leave them no queue of thousands, whatever the outcome. */
    @AfterEach
    void close() throws Exception {
        try (var c = database(); var st = c.prepareStatement(
                "select id from jobs where tenant = ? and state = 'PENDING'")) {
            st.setString(1, tenant);
            try (var rs = st.executeQuery()) {
                while (rs.next()) {
                    jobs().cancelJob(CancelJobRequest.newBuilder().setJobId(rs.getString(1)).setReason("test over")
                            .build());
                }
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** The stub with a deadline for one call (a stub's own deadline would count from the test's start). */
    JobServiceGrpc.JobServiceBlockingStub jobs() {
        return stub.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    JobSpec.Builder spec() {
        return JobSpec.newBuilder().setName("wait").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                .addCommand("sleep").addCommand("1");
    }

    @Test
    void aTakeoverDoesNotRewriteTheReasonsOfAQueueOfThousands() throws Exception {
        String arrayId = jobs().submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec())
                .setArray(JobArray.newBuilder().setCount(QUEUED)).build()).getArrayId();

        await().atMost(Duration.ofSeconds(60)).until(() -> withReason(arrayId) == QUEUED);
        // a reason names the fleet as this instance knows it (the broker's hosts of earlier tests), which a takeover
        // reads back: one takeover first, so that the one measured finds the fleet the reasons already name
        engine.takeOver().await().atMost(Duration.ofSeconds(60));
        Map<String, Row> before = settled(arrayId);
        assertThat(before.values()).allSatisfy(r -> assertThat(r.reason()).startsWith("pending: "));

        engine.takeOver().await().atMost(Duration.ofSeconds(60));
        // a job submitted after the takeover gets its reason from a pass that also saw the whole queue
        String probe = jobs().submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec()).build()).getJob().getJobId();
        await().atMost(Duration.ofSeconds(60)).until(() -> !jobs().getJob(GetJobRequest.newBuilder().setJobId(probe)
                .build()).getReason().isBlank());
        Thread.sleep(1_000); // and a few more passes

        Map<String, Row> after = rows(arrayId);
        int unchanged = 0;
        for (var e : before.entrySet()) {
            Row now = after.get(e.getKey());
            if (now.reason().equals(e.getValue().reason())) {
                unchanged++;
                assertThat(now.updatedAt()).as("updated_at of %s, whose reason did not change", e.getKey())
                        .isEqualTo(e.getValue().updatedAt());
            }
        }
        // a reason names the fleet, which the suite's other classes change (their hosts fall silent): where it
        // changed for every job meanwhile, this run shows nothing either way
        assumeThat(unchanged).as("jobs whose reason stayed the same across the takeover").isPositive();
    }

    @Test
    void aBurstOfHostsRewritesAQueuedReasonAtMostEveryFewSeconds() throws Exception {
        String arrayId = jobs().submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec())
                .setArray(JobArray.newBuilder().setCount(20)).build()).getArrayId();
        await().atMost(Duration.ofSeconds(60)).until(() -> withReason(arrayId) == 20);
        String watched = arrayId + "-0";

        // hosts join one after another, none with the jobs' model: each changes the count the jobs' reason gives
        Set<String> stored = new HashSet<>();
        stored.add(rows(arrayId).get(watched).updatedAt());
        String before = rows(arrayId).get(watched).reason();
        String other = "OTHER-" + model;
        long start = System.currentTimeMillis();
        try (TestKafka kafka = new TestKafka()) {
            for (int i = 0; i < 15; i++) {
                String nodeId = "reasons-" + tenant + "-" + i;
                kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, other), "test"));
                for (int k = 0; k < 4; k++) {
                    Thread.sleep(50);
                    stored.add(rows(arrayId).get(watched).updatedAt());
                }
            }
        }
        long sampleUntil = System.currentTimeMillis() + 1_000;
        while (System.currentTimeMillis() < sampleUntil) {
            Thread.sleep(50);
            stored.add(rows(arrayId).get(watched).updatedAt());
        }
        long window = System.currentTimeMillis() - start;
        // one write per refresh interval (2 s) at most, plus the one the burst began in; one per host before
        assertThat(stored.size() - 1).as("times the reason of %s was stored in %d ms of hosts joining", watched,
                window).isLessThanOrEqualTo((int) (window / 2_000) + 2);
        // and what the hosts changed is stored, not left behind by the interval
        await().atMost(Duration.ofSeconds(30)).until(() -> !rows(arrayId).get(watched).reason().equals(before));
    }

    static HostInventory host(String nodeId, String gpuModel) {
        List<GpuDevice> devices = List.of(new GpuDevice(0, nodeId + "-0", gpuModel, 40_960, null, 0, false, List.of()));
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(), devices, List.of(), "simulated", Instant.now());
    }

    record Row(String reason, String updatedAt) {
    }

    static java.sql.Connection database() throws java.sql.SQLException {
        String jdbc = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        return DriverManager.getConnection(jdbc, "gpucloud", "gpucloud");
    }

    /** How many of the array's jobs hold a reason a pass gave (not the one they were submitted with). */
    static int withReason(String arrayId) throws java.sql.SQLException {
        try (var c = database(); var st = c.prepareStatement(
                "select count(*) from jobs where array_id = ? and state = 'PENDING' and reason like 'pending: %'")) {
            st.setString(1, arrayId);
            try (var rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The array's rows once two reads, further apart than a changed reason may wait to be stored, agree. */
    static Map<String, Row> settled(String arrayId) throws Exception {
        Map<String, Row> last = rows(arrayId);
        for (int i = 0; i < 20; i++) {
            Thread.sleep(3_000); // SchedulingTurn.REASONS_REFRESH_MILLIS (2 s) and a second
            Map<String, Row> now = rows(arrayId);
            if (now.equals(last)) {
                return now;
            }
            last = now;
        }
        return last;
    }

    static Map<String, Row> rows(String arrayId) throws java.sql.SQLException {
        Map<String, Row> out = new HashMap<>();
        try (var c = database(); var st = c.prepareStatement(
                "select id, reason, cast(updated_at as text) from jobs where array_id = ?")) {
            st.setString(1, arrayId);
            try (var rs = st.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), new Row(rs.getString(2), rs.getString(3)));
                }
            }
        }
        return out;
    }
}
