package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobLogChunk;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.LogChunk;
import dev.gpucloud.contracts.grpc.v1.LogLine;
import dev.gpucloud.contracts.grpc.v1.LogStream;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
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
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** StreamLogs over real gRPC, reading what agents wrote to a real job.logs topic. */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class JobLogsTest {

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    String model;
    String tenant;
    String nodeId;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        kafka = new TestKafka();
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "LOGS-" + run;
        tenant = "t-" + run;
        nodeId = "node-logs-" + run;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    HostInventory host(int gpus) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(), devices, List.of(), "simulated", Instant.now());
    }

    String submit() {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(JobSpec.newBuilder().setName("train")
                        .setWorkers(1).setGpusPerWorker(1).addGpuModels(model).addCommand("python")
                        .addCommand("train.py")).build()).getJob().getJobId();
    }

    /** A job placed on this test's host and started there; its START command. */
    NodeCommand running() {
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(8), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
        String id = submit();
        NodeCommand start = EventRecords.decode(Topics.NODE_COMMANDS,
                commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(20)).get(0)).payload();
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id,
                nodeId, AllocationEventType.STARTED, Instant.now(), null, null, null), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> jobs.getJob(GetJobRequest.newBuilder().setJobId(id)
                .build()).getState() == JobState.RUNNING);
        return start;
    }

    void chunk(NodeCommand start, String node, JobLogChunk.Stream stream, boolean end, JobLogChunk.Line... lines) {
        JobLogChunk chunk = new JobLogChunk(start.jobId(), start.allocationId(), start.tenant(), node, start.rank(),
                stream, List.of(lines), end);
        kafka.send(EventRecords.record(Topics.JOB_LOGS, start.jobId(), chunk, "/node-agent/" + node));
    }

    static JobLogChunk.Line line(long offset, String text) {
        return JobLogChunk.Line.of(Instant.now(), offset, text, false);
    }

    static List<String> texts(Iterator<LogChunk> chunks) {
        List<String> out = new ArrayList<>();
        chunks.forEachRemaining(c -> c.getLinesList().forEach(l -> out.add(c.getStream() + " " + l.getText())));
        return out;
    }

    @Test
    void aJobsOutputIsShownOnceInOrderWithoutWhatAnotherHostAnUnknownAllocationOrAMalformedRecordClaims() {
        NodeCommand start = running();
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, false, line(0, "epoch 1"), line(8, "epoch 2"));
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, false, line(0, "epoch 1"), line(8, "epoch 2")); // sent again
        chunk(start, nodeId, JobLogChunk.Stream.STDERR, false, line(0, "warning: slow loader"));
        chunk(start, "node-somebody-else", JobLogChunk.Stream.STDOUT, false, line(16, "forged"));
        // the right host, but an allocation the job never had: an agent writing into another job's output
        kafka.send(EventRecords.record(Topics.JOB_LOGS, start.jobId(), new JobLogChunk(start.jobId(), "alloc-forged",
                start.tenant(), nodeId, 0, JobLogChunk.Stream.STDOUT, List.of(line(0, "forged allocation")), false),
                "/node-agent/" + nodeId));
        kafka.send(new ProducerRecord<>(Topics.JOB_LOGS.name(), start.jobId(), "{not json".getBytes()));
        // a tombstone with every header, on a topic that has none: it once ended every read of this job's output
        kafka.send(EventRecords.tombstone(Topics.JOB_LOGS, start.jobId(), "/node-agent/" + nodeId));
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, false, line(8, "epoch 2"), line(16, "epoch 3"));

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(texts(jobs.streamLogs(
                StreamLogsRequest.newBuilder().setJobId(start.jobId()).build()))).containsExactly(
                        "LOG_STDOUT epoch 1", "LOG_STDOUT epoch 2", "LOG_STDERR warning: slow loader",
                        "LOG_STDOUT epoch 3"));
        assertThat(texts(jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId(start.jobId())
                .setStream(LogStream.LOG_STDERR).build()))).containsExactly("LOG_STDERR warning: slow loader");
        assertThat(texts(jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId(start.jobId()).setRank(3)
                .build()))).isEmpty();
    }

    @Test
    void aFollowShowsLinesAsTheyComeAndEndsWhenTheJobHasEndedAndItsStreamsSaySo() throws Exception {
        NodeCommand start = running();
        List<LogChunk> seen = new CopyOnWriteArrayList<>();
        Thread follower = new Thread(() -> JobServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(90, TimeUnit.SECONDS).streamLogs(StreamLogsRequest.newBuilder()
                        .setJobId(start.jobId()).setFollow(true).build()).forEachRemaining(seen::add));
        follower.start();
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, false, line(0, "step 1"));
        await().atMost(Duration.ofSeconds(20)).until(() -> seen.stream().anyMatch(c -> c.getLinesCount() > 0));
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, false, new JobLogChunk.Line(Instant.now(), 7,
                "[gpucloud] 10 line(s) (1.0 KiB) of stdout not sent", false, 10, 1024));
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, start.jobId(), new AllocationEvent(
                start.allocationId(), start.jobId(), nodeId, AllocationEventType.EXITED, Instant.now(), 0, null, null),
                "test"));
        chunk(start, nodeId, JobLogChunk.Stream.STDOUT, true, line(1031, "done"));
        chunk(start, nodeId, JobLogChunk.Stream.STDERR, true);
        follower.join(60_000);
        assertThat(follower.isAlive()).as("the follow ended by itself").isFalse();
        List<LogLine> lines = seen.stream().flatMap(c -> c.getLinesList().stream()).toList();
        assertThat(lines).extracting(LogLine::getText).containsExactly("step 1",
                "[gpucloud] 10 line(s) (1.0 KiB) of stdout not sent", "done");
        assertThat(lines.get(1).getDroppedLines()).isEqualTo(10);
        assertThat(seen).filteredOn(LogChunk::getEnd).hasSize(2);
        assertThat(seen).allSatisfy(c -> {
            assertThat(c.getNodeId()).isEqualTo(nodeId);
            assertThat(c.getAllocationId()).isEqualTo(start.allocationId());
        });
    }

    @Test
    void badRequestsAreRefusedWithWhatIsWrong() {
        assertThatThrownBy(() -> jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId("job-nosuch").build())
                .hasNext()).isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        assertThatThrownBy(() -> jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId("").build()).hasNext())
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("job_id");
                });
        assertThatThrownBy(() -> jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId("job-x").setRank(-1)
                .build()).hasNext()).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("rank").contains("4294967295");
                });
        // a job no host can take never runs: asking for its output says so
        String pending = submit();
        assertThatThrownBy(() -> jobs.streamLogs(StreamLogsRequest.newBuilder().setJobId(pending).build())
                .hasNext()).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).contains("has not run yet").contains("follow");
                });
    }
}
