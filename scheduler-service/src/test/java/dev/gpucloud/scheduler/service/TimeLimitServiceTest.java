package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Time limits through the service, a real broker and a real database: a job with a 3 s limit runs on a host this
 * test plays the agent of (it reads node.commands and reports on allocation.events), and ends FAILED at its
 * limit, after its last checkpoint when it saves them.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class TimeLimitServiceTest {

    @TestHTTPResource("/")
    URL url;

    @jakarta.inject.Inject
    dev.gpucloud.scheduler.service.engine.SchedulerEngine engine;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    TopicTail commands;
    String model;
    String tenant;
    String node;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        kafka = new TestKafka();
        commands = kafka.tail(Topics.NODE_COMMANDS.name());
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "A100-SXM4-80GB-TL-" + run;
        tenant = "t-" + run;
        node = "tl-" + run;
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            devices.add(new GpuDevice(i, node + "-" + i, model, 81_920, null, 0, false, List.of()));
        }
        HostInventory host = new HostInventory(node, node + ".test", "p4de.24xlarge", "zone-a",
                CapacityType.ON_DEMAND, 40_960_000, 96_000, 1_000_000, null, List.of(), devices, List.of(),
                "simulated", Instant.now());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, node, host, "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    String submit(JobSpec.Builder spec) {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec).build()).getJob().getJobId();
    }

    JobSpec.Builder spec(long limitSeconds) {
        return JobSpec.newBuilder().setName("train").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                .addCommand("python").addCommand("train.py").setTimeLimitSeconds(limitSeconds);
    }

    Job job(String id) {
        return jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
    }

    NodeCommand nextCommand(String jobId) {
        List<ConsumerRecord<String, byte[]>> got = commands.next(r -> node.equals(r.key())
                && EventRecords.decode(Topics.NODE_COMMANDS, r).payload().jobId().equals(jobId), 1,
                Duration.ofSeconds(30));
        assertThat(got).as("a node command for %s", jobId).isNotEmpty();
        return EventRecords.decode(Topics.NODE_COMMANDS, got.get(0)).payload();
    }

    void report(NodeCommand c, AllocationEventType type, Integer exit, String checkpoint) {
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, c.jobId(), new AllocationEvent(c.allocationId(),
                c.jobId(), c.nodeId(), type, Instant.now(), exit, checkpoint, "test"), "test"));
    }

    @Test
    void aJobThatDoesNotCheckpointIsStoppedAtItsLimitAndEndsFailedSayingSo() {
        String id = submit(spec(3));
        NodeCommand start = nextCommand(id);
        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        NodeCommand stop = nextCommand(id);
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        Job ended = job(id);
        assertThat(ended.getState()).isEqualTo(JobState.FAILED);
        assertThat(ended.getReason()).startsWith("time limit of 3s reached after ")
                .endsWith("; it saves no checkpoints");
        report(start, AllocationEventType.EXITED, 143, null); // its worker stops: it stays FAILED, not retried
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> job(id).getState() == JobState.FAILED);
    }

    @Test
    void aJobThatCheckpointsEndsFailedAfterItsLastCheckpointWithItsResumeFromSet() {
        String id = submit(spec(3).setCheckpoint(CheckpointPolicy.newBuilder().setIntervalSeconds(600)
                .setLocation("s3://ckpt/tl")));
        NodeCommand start = nextCommand(id);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        NodeCommand checkpoint = nextCommand(id);
        assertThat(checkpoint.type()).isEqualTo(NodeCommandType.CHECKPOINT);
        assertThat(checkpoint.deadline()).isAfter(Instant.now());
        Job asked = job(id);
        assertThat(asked.getState()).isEqualTo(JobState.CHECKPOINTING);
        assertThat(asked.getReason()).startsWith("time limit of 3s reached after ")
                .contains(" of running; checkpoint by ");

        report(start, AllocationEventType.CHECKPOINT_SAVED, null, "s3://ckpt/tl/" + id + "/step-7");
        NodeCommand stop = nextCommand(id);
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        Job ended = job(id);
        assertThat(ended.getState()).isEqualTo(JobState.FAILED);
        assertThat(ended.getReason()).startsWith("time limit of 3s reached after ")
                .endsWith("; checkpoint saved at s3://ckpt/tl/" + id + "/step-7");
        assertThat(ended.getResumeFrom()).isEqualTo("s3://ckpt/tl/" + id + "/step-7");
    }

    @Test
    void aRestartWhileItSavesItsLastCheckpointStillEndsItInsteadOfRequeueingIt() {
        String id = submit(spec(3).setCheckpoint(CheckpointPolicy.newBuilder().setIntervalSeconds(600)
                .setLocation("s3://ckpt/tl")));
        NodeCommand start = nextCommand(id);
        report(start, AllocationEventType.STARTED, null, null);
        assertThat(nextCommand(id).type()).isEqualTo(NodeCommandType.CHECKPOINT);

        engine.takeOver().await().atMost(Duration.ofSeconds(30)); // memory rebuilt from the rows
        report(start, AllocationEventType.CHECKPOINT_SAVED, null, "s3://ckpt/tl/" + id + "/step-9");
        assertThat(nextCommand(id).type()).isEqualTo(NodeCommandType.STOP);
        Job ended = job(id);
        assertThat(ended.getState()).isEqualTo(JobState.FAILED);
        assertThat(ended.getReason()).startsWith("time limit of 3s").endsWith("checkpoint saved at s3://ckpt/tl/"
                + id + "/step-9");
    }
}
