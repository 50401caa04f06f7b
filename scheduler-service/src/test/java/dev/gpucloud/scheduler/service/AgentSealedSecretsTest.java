package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.secrets.AgentSeal;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With the stack's enrolment key configured, a job's secret value leaves the scheduler sealed for the agent enrolled
 * for its worker's host (docs/security.md, "Secret job variables"): the outbox row and the record on node.commands
 * hold no clear value, that agent's credential opens it, another agent's does not. Over real gRPC, a real broker and
 * a real database; the agent's records are signed as the agent signs them.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(AgentSealedSecretsTest.EnrolmentKeyFile.class)
class AgentSealedSecretsTest {

    /** A fresh enrolment key, owner-only, as {@code kafka.sh provision} makes it: this scheduler checks and seals. */
    public static class EnrolmentKeyFile implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            try {
                Path file = Files.createTempDirectory("gpucloud-enrolment").resolve("enrolment.key");
                Enrolment.enrolmentKey(file);
                file.toFile().deleteOnExit();
                file.getParent().toFile().deleteOnExit();
                return Map.of("gpucloud.enrolment.key", file.toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }

    /** A value that must never be seen in the clear outside the worker. */
    private static final String SECRET = "hunter2-" + UUID.randomUUID();
    /** Copies every row added to the outbox, before the publisher deletes it, so the test can read what it held. */
    private static final String OUTBOX_COPY = "outbox_copy_for_agent_seal_test";

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    String run;
    String model;
    Enrolment.Credential agent;
    Enrolment.Credential otherAgent;

    @BeforeEach
    void connect() throws IOException, SQLException {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        kafka = new TestKafka();
        run = UUID.randomUUID().toString().substring(0, 8);
        model = "TEST-" + run;
        byte[] enrolmentKey = Enrolment.enrolmentKey(Path.of(ConfigProvider.getConfig()
                .getValue("gpucloud.enrolment.key", String.class)));
        agent = Enrolment.Credential.mint(enrolmentKey, "rack-" + run, List.of("sealed-" + run + "-*"));
        otherAgent = Enrolment.Credential.mint(enrolmentKey, "spare-" + run, List.of("sealed-" + run + "-*"));
        try (Connection c = database(); var st = c.createStatement()) {
            st.execute("create table if not exists " + OUTBOX_COPY + " (topic text, record_key text, payload bytea)");
            st.execute("create or replace function " + OUTBOX_COPY + "() returns trigger language plpgsql as $$ begin"
                    + " insert into " + OUTBOX_COPY + " values (new.topic, new.record_key, new.payload); return new;"
                    + " end $$");
            st.execute("drop trigger if exists " + OUTBOX_COPY + " on outbox");
            st.execute("create trigger " + OUTBOX_COPY + " after insert on outbox for each row execute function "
                    + OUTBOX_COPY + "()");
        }
    }

    @AfterEach
    void close() throws InterruptedException, SQLException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
        try (Connection c = database(); var st = c.createStatement()) {
            st.execute("drop trigger if exists " + OUTBOX_COPY + " on outbox");
            st.execute("drop function if exists " + OUTBOX_COPY + "()");
            st.execute("drop table if exists " + OUTBOX_COPY);
        }
    }

    static Connection database() throws SQLException {
        String jdbc = ConfigProvider.getConfig().getValue("quarkus.datasource.jdbc.url", String.class);
        return DriverManager.getConnection(jdbc, "gpucloud", "gpucloud");
    }

    HostInventory host(String nodeId) {
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(),
                List.of(new GpuDevice(0, nodeId + "-0", model, 40_960, null, 0, false, List.of())), List.of(),
                "simulated", Instant.now());
    }

    /** A record as the agent of {@code nodeId} sends it: from its source, signed with its credential. */
    <T> ProducerRecord<String, byte[]> fromAgent(dev.gpucloud.contracts.events.Topic<T> topic, String key, T payload,
            String nodeId) {
        return agent.sign(EventRecords.record(topic, key, payload, Enrolment.SOURCE_PREFIX + nodeId));
    }

    /** What the outbox held for {@code nodeId}'s commands, oldest first. */
    List<String> outboxRowsFor(String nodeId) throws SQLException {
        List<String> payloads = new ArrayList<>();
        try (Connection c = database(); var st = c.prepareStatement("select payload from " + OUTBOX_COPY
                + " where topic = ? and record_key = ?")) {
            st.setString(1, Topics.NODE_COMMANDS.name());
            st.setString(2, nodeId);
            try (var rows = st.executeQuery()) {
                while (rows.next()) {
                    payloads.add(new String(rows.getBytes(1), StandardCharsets.UTF_8));
                }
            }
        }
        return payloads;
    }

    static String text(ConsumerRecord<String, byte[]> record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }

    @Test
    void a_secret_leaves_the_scheduler_sealed_for_the_agent_of_its_workers_host_only() throws SQLException {
        String nodeId = "sealed-" + run + "-0";
        String unsigned = "sealed-" + run + "-9";
        TopicTail commands = kafka.tail(Topics.NODE_COMMANDS.name());
        TopicTail refusedInventory = kafka.deadLetters(Topics.GPU_INVENTORY);
        // the key is in force: a host whose inventory no enrolled agent signed never joins
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, unsigned, host(unsigned),
                Enrolment.SOURCE_PREFIX + unsigned));
        kafka.send(fromAgent(Topics.GPU_INVENTORY, nodeId, host(nodeId), nodeId));
        assertThat(refusedInventory.next(r -> unsigned.equals(r.key()), 1, Duration.ofSeconds(20)).get(0))
                .satisfies(r -> assertThat(TopicTail.deadLetterReason(r)).contains("not signed by an enrolled agent"));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc
                .newBlockingStub(channel).listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build())
                .getNodesCount() == 1);

        String id = jobs.submitJob(SubmitJobRequest.newBuilder().setTenant("t-" + run)
                .setClientRequestId(UUID.randomUUID().toString())
                .setSpec(JobSpec.newBuilder().setName("train").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                        .addCommand("sleep").addCommand("5").putEnv("MODE", "fast")
                        .putSecretEnv("WANDB_API_KEY", SECRET))
                .build()).getJob().getJobId();

        // node.commands holds the value sealed for the host's agent: that agent opens it, another does not
        ConsumerRecord<String, byte[]> record = commands.next(r -> r.key().equals(nodeId), 1,
                Duration.ofSeconds(20)).get(0);
        assertThat(text(record)).doesNotContain(SECRET);
        NodeCommand start = EventRecords.decode(Topics.NODE_COMMANDS, record).payload();
        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        assertThat(start.env()).containsExactly(Map.entry("MODE", "fast"));
        assertThat(start.secretEnv().get("WANDB_API_KEY")).startsWith("gpucloud:agent-sealed:v1:rack-" + run + ":");
        assertThat(AgentSeal.open(start, agent.seal())).containsExactly(Map.entry("WANDB_API_KEY", SECRET));
        assertThatThrownBy(() -> AgentSeal.open(start, otherAgent.seal()))
                .isInstanceOf(AgentSeal.Refused.class).hasMessageContaining("'WANDB_API_KEY'")
                .hasMessageNotContaining(SECRET);

        // a lost worker requeues the job: the next START, built from the stored spec, is sealed again
        kafka.send(fromAgent(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id, nodeId,
                AllocationEventType.STARTED, Instant.now(), null, null, null), nodeId));
        kafka.send(fromAgent(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id, nodeId,
                AllocationEventType.LOST, Instant.now(), null, null, "test: the host lost it"), nodeId));
        List<ConsumerRecord<String, byte[]>> starts = commands.until(
                r -> r.key().equals(nodeId) && text(r).contains("\"START\""), found -> found.size() >= 2,
                Duration.ofSeconds(30));
        NodeCommand again = starts.stream().map(r -> EventRecords.decode(Topics.NODE_COMMANDS, r).payload())
                .filter(c -> !c.allocationId().equals(start.allocationId())).findFirst().orElseThrow();
        assertThat(AgentSeal.open(again, agent.seal())).containsExactly(Map.entry("WANDB_API_KEY", SECRET));
        assertThat(starts).allSatisfy(r -> assertThat(text(r)).doesNotContain(SECRET));

        // every outbox row of the host's commands held it sealed, never in the clear
        List<String> rows = outboxRowsFor(nodeId);
        assertThat(rows.stream().filter(p -> p.contains("\"START\""))).hasSize(2)
                .allSatisfy(p -> assertThat(p).contains("gpucloud:agent-sealed:v1:rack-" + run + ":"));
        assertThat(rows).allSatisfy(p -> assertThat(p).doesNotContain(SECRET));

        jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(id).setReason("done").build());
    }
}
