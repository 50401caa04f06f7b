package dev.gpucloud.scheduler.service.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import java.time.Instant;
import java.util.List;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election against the real database: another instance takes the lease (as a standby does once the
 * leader's lease has expired), and this one must stop writing, send writers to the new leader and keep
 * answering reads; the database refuses its old epoch; once the lease is free again it leads under a new
 * epoch. The lease row is changed by hand here, exactly as a second instance would change it.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class LeadershipTest {

    static final Metadata.Key<String> LEADER = Metadata.Key.of("gpucloud-leader", Metadata.ASCII_STRING_MARSHALLER);

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> "leader".equals(leader().getString("role")));
    }

    @AfterEach
    void close() throws Exception {
        try (Connection c = db()) {
            c.createStatement().executeUpdate("update scheduler_leader set lease_until = '-infinity'"
                    + " where holder = 'scheduler-other'");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> "leader".equals(leader().getString("role")));
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aDeposedLeaderRefusesWritesNamingTheNewLeaderAnswersReadsAndLeadsAgainUnderANewEpoch() throws Exception {
        JsonObject before = leader();
        long epoch = before.getLong("epoch");
        assertThat(before.getString("instance")).isEqualTo("scheduler-0");
        assertThat(before.getJsonObject("leader").getString("address")).startsWith("localhost:");
        String accepted;
        try (TestKafka kafka = new TestKafka(); var commands = kafka.tail(Topics.NODE_COMMANDS.name())) {
            String node = "lead-" + RUN;
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, new HostInventory(node, node + ".test",
                    "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND, 21_960_000, 96_000, 1_000_000, "a", List.of(),
                    List.of(new GpuDevice(0, node + "-0", MODEL, 40_960, null, 0, false, List.of())), List.of(),
                    "simulated", Instant.now()), "test"));
            await().atMost(Duration.ofSeconds(30)).ignoreException(StatusRuntimeException.class)
                    .until(() -> submit("before") != null);
            accepted = submit("before").getJob().getJobId();
            // the START it is placed with carries the leader's epoch
            String job = accepted;
            NodeCommand start = EventCodec.decode(Topics.NODE_COMMANDS.name(), NodeCommand.class,
                    commands.until(r -> node.equals(r.key()), l -> !l.isEmpty(), Duration.ofSeconds(30)).get(0).value());
            assertThat(start.type()).isEqualTo(NodeCommandType.START);
            assertThat(start.jobId()).isEqualTo(job);
            assertThat(start.epoch()).isEqualTo(epoch);
        }

        try (Connection c = db()) {
            assertThat(c.createStatement().executeUpdate("update scheduler_leader set epoch = epoch + 1,"
                    + " holder = 'scheduler-other', address = 'other.example:8081', lease_until = now() + interval"
                    + " '1 hour' where id = 1")).isEqualTo(1);
            // the database itself refuses a write under the old epoch
            assertThatThrownBy(() -> c.createStatement().executeQuery("select gpucloud_fence(" + epoch + ", 1000)"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("fenced: this scheduler writes under epoch " + epoch)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("GC001"));
        }

        await().atMost(Duration.ofSeconds(10)).until(() -> "standby".equals(leader().getString("role"))
                && leader().getJsonObject("leader") != null);
        JsonObject standby = leader();
        assertThat(standby.getJsonObject("leader").getString("instance")).isEqualTo("scheduler-other");
        assertThat(standby.getLong("epoch")).isEqualTo(epoch + 1);

        // writes go to the leader: UNAVAILABLE, with its address in the trailer
        assertThatThrownBy(() -> submit("during")).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getStatus().getDescription()).contains("standby").contains("scheduler-other")
                    .contains("other.example:8081");
            assertThat(e.getTrailers().get(LEADER)).isEqualTo("other.example:8081");
        });
        assertThatThrownBy(() -> jobs.watchJob(WatchJobRequest.newBuilder().setJobId(accepted).build()).hasNext())
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        // reads are answered from the database
        assertThat(jobs.getJob(GetJobRequest.newBuilder().setJobId(accepted).build()).getJobId()).isEqualTo(accepted);
        assertThat(jobs.listJobs(ListJobsRequest.newBuilder().setTenant("t-leader").build()).getJobsList())
                .anySatisfy(j -> assertThat(j.getJobId()).isEqualTo(accepted));

        try (Connection c = db()) {
            c.createStatement().executeUpdate("update scheduler_leader set lease_until = '-infinity' where id = 1");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> "leader".equals(leader().getString("role")));
        assertThat(leader().getLong("epoch")).as("a new epoch: the database's clock, or one more").isGreaterThan(epoch + 1);
        // the job accepted before is known to the new term (restored from the database), and writes work again
        assertThat(submit("before").getDuplicate()).isTrue();
        assertThat(submit("after").getDuplicate()).isFalse();
    }

    /**
     * A leader paused inside a write transaction holds the fence's share lock on the lease row. Once its lease
     * has run out, the standby ends that transaction (it may no longer commit) instead of waiting for the
     * database to end it after idling a lease long, here ten minutes.
     */
    @Test
    void aTakeoverEndsTheWritesOfALeaderWhoseLeaseRanOut() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> "leader".equals(leader().getString("role")));
        long epoch = leader().getLong("epoch");
        try (Connection paused = db(); Connection c = db()) {
            assertThat(c.createStatement().executeUpdate("update scheduler_leader set epoch = epoch + 1,"
                    + " holder = 'scheduler-other', address = 'other.example:8081',"
                    + " lease_until = now() + interval '2 seconds' where id = 1")).isEqualTo(1);
            paused.setAutoCommit(false);
            try (var fence = paused.createStatement().executeQuery("select gpucloud_fence(" + (epoch + 1) + ", 600000)")) {
                assertThat(fence.next()).isTrue();
            }
            // ... and the other instance stops here, its transaction open, holding the row shared

            await().atMost(Duration.ofSeconds(15)).until(() -> "leader".equals(leader().getString("role"))
                    && leader().getLong("epoch") > epoch + 1);
            assertThatThrownBy(() -> paused.createStatement().executeQuery("select 1"))
                    .as("the paused leader's transaction was ended").isInstanceOf(SQLException.class);
        }
    }

    @jakarta.inject.Inject
    dev.gpucloud.scheduler.service.engine.SchedulerEngine engine;

    /**
     * A standby replays what the leader writes as it commits, reading only what changed since its last read;
     * taking over is then a catch-up. Here "the other leader" ends a job by hand while this instance stands by:
     * once it leads again it knows the GPU is free without having read everything, and places the job that
     * waited for it.
     */
    @Test
    void aStandbyFollowsTheLeadersWritesAndTakesOverByCatchingUp() throws Exception {
        String model = "FOLLOW-" + RUN;
        String node = "follow-" + RUN;
        String first;
        try (TestKafka kafka = new TestKafka(); var commands = kafka.tail(Topics.NODE_COMMANDS.name())) {
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, new HostInventory(node, node + ".test",
                    "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND, 21_960_000, 96_000, 1_000_000, "a", List.of(),
                    List.of(new GpuDevice(0, node + "-0", model, 40_960, null, 0, false, List.of())), List.of(),
                    "simulated", Instant.now()), "test"));
            await().atMost(Duration.ofSeconds(30)).ignoreException(StatusRuntimeException.class)
                    .until(() -> submit("follow-first", model) != null);
            first = submit("follow-first", model).getJob().getJobId();
            String job = first;
            commands.until(r -> node.equals(r.key()) && EventCodec.decode(Topics.NODE_COMMANDS.name(), NodeCommand.class,
                    r.value()).jobId().equals(job), l -> !l.isEmpty(), Duration.ofSeconds(30));
            String waits = submit("follow-waits", model).getJob().getJobId(); // the one GPU is taken

            long epoch = leader().getLong("epoch");
            try (Connection c = db()) {
                c.createStatement().executeUpdate("update scheduler_leader set epoch = epoch + 1,"
                        + " holder = 'scheduler-other', address = 'other.example:8081', lease_until = now() + interval"
                        + " '1 hour' where id = 1");
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> "standby".equals(leader().getString("role")));
            // the other leader's worker ends and it settles the job, while this instance follows
            try (Connection c = db()) {
                c.createStatement().executeUpdate("update allocations set state = 'EXITED', exit_code = 0,"
                        + " ended_at = now() where job_id = '" + first + "'");
                c.createStatement().executeUpdate("update jobs set state = 'SUCCEEDED', exit_code = 0,"
                        + " reason = 'ended by the other leader' where id = '" + first + "'");
            }
            Thread.sleep(1500); // a few ticks: the standby has read the change
            assertThat(engine.follow().await().atMost(Duration.ofSeconds(10))).as("nothing changed since: a follow"
                    + " reads no row, where a full read would count the open ones").isZero();

            try (Connection c = db()) {
                c.createStatement().executeUpdate("update scheduler_leader set lease_until = '-infinity' where id = 1");
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> "leader".equals(leader().getString("role"))
                    && leader().getLong("epoch") > epoch + 1);
            NodeCommand start = EventCodec.decode(Topics.NODE_COMMANDS.name(), NodeCommand.class,
                    commands.until(r -> node.equals(r.key()) && EventCodec.decode(Topics.NODE_COMMANDS.name(),
                            NodeCommand.class, r.value()).jobId().equals(waits), l -> !l.isEmpty(),
                            Duration.ofSeconds(30)).get(0).value());
            assertThat(start.type()).as("placed on the GPU the caught-up state knows is free")
                    .isEqualTo(NodeCommandType.START);
        }
    }

    dev.gpucloud.contracts.grpc.v1.SubmitJobResponse submit(String requestId, String model) {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant("t-leader").setClientRequestId(requestId + "-"
                        + RUN)
                .setSpec(JobSpec.newBuilder().setName("follow").setWorkers(1).setGpusPerWorker(1)
                        .addGpuModels(model).addCommand("true"))
                .build());
    }

    dev.gpucloud.contracts.grpc.v1.SubmitJobResponse submit(String requestId) {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant("t-leader").setClientRequestId(requestId + "-"
                        + RUN)
                .setSpec(JobSpec.newBuilder().setName("lead").setWorkers(1).setGpusPerWorker(1)
                        .addGpuModels(MODEL).addCommand("true"))
                .build());
    }

    static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    static final String MODEL = "LEAD-" + RUN;

    JsonObject leader() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + url.getHost() + ":"
                + url.getPort() + "/scheduler/leader")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return new JsonObject(r.body());
    }

    static Connection db() throws SQLException {
        String jdbc = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        return DriverManager.getConnection(jdbc, "gpucloud", "gpucloud");
    }
}
