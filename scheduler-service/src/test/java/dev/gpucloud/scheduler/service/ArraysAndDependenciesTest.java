package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ArrayParameter;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.Dependency;
import dev.gpucloud.contracts.grpc.v1.DependencyCondition;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobArray;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
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
 * Job arrays and jobs that run after others, through the service, a real broker and a real database: an array is
 * accepted as a whole with each element's variables, listed by index and repeated idempotently; a dependent job
 * waits out of the queue, runs once its dependency succeeded, is cancelled with the reason once it failed, and is
 * still released after the scheduler lost and regained the lead; bad dependencies and arrays are refused.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class ArraysAndDependenciesTest {

    @TestHTTPResource("/")
    URL url;

    @jakarta.inject.Inject
    SchedulerEngine engine;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    TopicTail commands;
    String model;
    String tenant;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        kafka = new TestKafka();
        commands = kafka.tail(Topics.NODE_COMMANDS.name());
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "H100-ARRAYS-TEST-" + run;
        tenant = "t-" + run;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    JobSpec.Builder spec() {
        return JobSpec.newBuilder().setName("sweep").setWorkers(1).setGpusPerWorker(1).addGpuModels(model)
                .addCommand("python").addCommand("train.py");
    }

    SubmitJobResponse submit(JobSpec.Builder spec, JobArray array, String requestId) {
        SubmitJobRequest.Builder r = SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId(requestId)
                .setSpec(spec);
        if (array != null) {
            r.setArray(array);
        }
        return jobs.submitJob(r.build());
    }

    String submit(JobSpec.Builder spec) {
        return submit(spec, null, UUID.randomUUID().toString()).getJob().getJobId();
    }

    Job job(String id) {
        return jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
    }

    void join(String nodeId, int gpus) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 81_920, null, 0, false, List.of()));
        }
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, new HostInventory(nodeId, nodeId + ".test",
                "p5.48xlarge", "zone-a", CapacityType.ON_DEMAND, 40_960_000, 96_000, 1_000_000, null, List.of(),
                devices, List.of(), "simulated", Instant.now()), "test"));
        // ignoring UNAVAILABLE: the first test of a run may come before this instance took the lead
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
    }

    /** The next START for job {@code jobId} on the node. */
    NodeCommand startOf(String jobId) {
        List<ConsumerRecord<String, byte[]>> got = commands.next(r -> {
            NodeCommand c = EventRecords.decode(Topics.NODE_COMMANDS, r).payload();
            return c.type() == NodeCommandType.START && c.jobId().equals(jobId);
        }, 1, Duration.ofSeconds(30));
        assertThat(got).as("a START of %s", jobId).isNotEmpty();
        return EventRecords.decode(Topics.NODE_COMMANDS, got.get(0)).payload();
    }

    /** Every START {@code jobId} got over the whole test, in the order they were read. */
    List<NodeCommand> startsEver(String jobId) {
        commands.drain();
        return commands.matching(r -> true).stream().map(r -> EventRecords.decode(Topics.NODE_COMMANDS, r).payload())
                .filter(c -> c.type() == NodeCommandType.START && c.jobId().equals(jobId)).toList();
    }

    /** The job was started once, and not before {@code dependency} ended: never while it waited. */
    void startedOnceAfter(String jobId, String dependency) {
        com.google.protobuf.Timestamp ended = job(dependency).getUpdatedAt();
        Instant endedAt = Instant.ofEpochSecond(ended.getSeconds(), ended.getNanos());
        assertThat(startsEver(jobId)).as("the STARTs of %s", jobId).singleElement()
                .satisfies(c -> assertThat(c.issuedAt()).isAfterOrEqualTo(endedAt));
    }

    void exit(NodeCommand start, int code) {
        for (AllocationEventType type : List.of(AllocationEventType.STARTED, AllocationEventType.EXITED)) {
            kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, start.jobId(), new AllocationEvent(
                    start.allocationId(), start.jobId(), start.nodeId(), type, Instant.now(),
                    type == AllocationEventType.EXITED ? code : null, null, "test"), "test"));
        }
    }

    StatusRuntimeException refusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call was not refused");
    }

    @Test
    void anArrayIsAcceptedAsAWholeListedByIndexAndARepeatAnswersTheSameArray() {
        join("arr-host-" + model, 2);
        String requestId = "sweep-" + UUID.randomUUID();
        JobArray grid = JobArray.newBuilder()
                .addParameters(ArrayParameter.newBuilder().setName("LR").addValues("1e-3").addValues("1e-4"))
                .addParameters(ArrayParameter.newBuilder().setName("BATCH").addValues("32").addValues("64")
                        .addValues("128"))
                .build();
        SubmitJobResponse first = submit(spec(), grid, requestId);
        String arrayId = first.getArrayId();
        assertThat(arrayId).startsWith("arr-");
        assertThat(first.getArrayCount()).isEqualTo(6);
        assertThat(first.getJob().getJobId()).isEqualTo(arrayId + "-0");
        assertThat(first.getJob().getArrayIndex()).isZero();
        assertThat(first.getDuplicate()).isFalse();

        List<Job> elements = new ArrayList<>();
        String token = "";
        do { // two pages of four at most, in index order
            ListJobsResponse page = jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).setArrayId(arrayId)
                    .setPageSize(4).setPageToken(token).build());
            elements.addAll(page.getJobsList());
            token = page.getNextPageToken();
        } while (!token.isEmpty());
        assertThat(elements).extracting(Job::getArrayIndex).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(elements).allSatisfy(j -> assertThat(j.getArrayId()).isEqualTo(arrayId));
        Job fourth = elements.get(3);
        assertThat(fourth.getJobId()).isEqualTo(arrayId + "-3");
        assertThat(fourth.getSpec().getEnvMap()).containsEntry("GPUCLOUD_ARRAY_ID", arrayId)
                .containsEntry("GPUCLOUD_ARRAY_INDEX", "3").containsEntry("GPUCLOUD_ARRAY_COUNT", "6")
                .containsEntry("LR", "1e-4").containsEntry("BATCH", "32");

        SubmitJobResponse again = submit(spec(), grid, requestId);
        assertThat(again.getDuplicate()).isTrue();
        assertThat(again.getArrayId()).isEqualTo(arrayId);
        assertThat(again.getArrayCount()).isEqualTo(6);
        StatusRuntimeException conflict = refusal(() -> submit(spec().setName("other"), grid, requestId));
        assertThat(conflict.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);

        // two GPUs: two elements run, the rest wait in line with a reason
        NodeCommand start = startOf(arrayId + "-0");
        assertThat(start.env()).containsEntry("GPUCLOUD_ARRAY_INDEX", "0").containsEntry("LR", "1e-3");
    }

    @Test
    void badArraysAreRefusedWithWhatIsWrongAndNothingIsStored() {
        join("bad-arr-host-" + model, 1);
        StatusRuntimeException huge = refusal(() -> submit(spec(), JobArray.newBuilder().setCount(1_000_000).build(),
                "huge-" + UUID.randomUUID()));
        assertThat(huge.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(huge.getStatus().getDescription()).contains("array.count");
        StatusRuntimeException clash = refusal(() -> submit(spec().putEnv("LR", "0.1"), JobArray.newBuilder()
                .addParameters(ArrayParameter.newBuilder().setName("LR").addValues("1")).build(),
                "clash-" + UUID.randomUUID()));
        assertThat(clash.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(clash.getStatus().getDescription()).contains("'LR'");
        StatusRuntimeException longId = refusal(() -> submit(spec(), JobArray.newBuilder().setCount(2).build(),
                "x".repeat(101)));
        assertThat(longId.getStatus().getDescription()).contains("client_request_id");
        assertThat(jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).build()).getJobsCount()).isZero();
    }

    @Test
    void aJobAfterAnotherWaitsThenRunsOnceItSucceededAndAJobAfterAFailureIsCancelledWithTheReason() {
        join("dep-host-" + model, 1);
        String prep = submit(spec().setName("prep"));
        String train = submit(spec().setName("train").addAfter(Dependency.newBuilder().setJobId(prep)));
        String cleanup = submit(spec().setName("cleanup").addAfter(Dependency.newBuilder().setJobId(train)
                .setOn(DependencyCondition.AFTER_ANY)));
        assertThat(job(train).getState()).isEqualTo(JobState.WAITING_FOR_DEPENDENCIES);
        assertThat(job(train).getReason()).startsWith("waiting for " + prep + " (").endsWith(") to succeed");
        assertThat(job(train).getSpec().getAfterList()).extracting(Dependency::getJobId).containsExactly(prep);
        assertThat(job(cleanup).getReason()).isEqualTo("waiting for " + train + " (WAITING_FOR_DEPENDENCIES) to end");

        exit(startOf(prep), 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(prep).getState() == JobState.SUCCEEDED);
        NodeCommand trainStart = startOf(train);
        assertThat(job(cleanup).getState()).isEqualTo(JobState.WAITING_FOR_DEPENDENCIES);

        String eval = submit(spec().setName("eval").addAfter(Dependency.newBuilder().setJobId(train)));
        exit(trainStart, 2); // exit 2 is never retried
        await().atMost(Duration.ofSeconds(20)).until(() -> job(train).getState() == JobState.FAILED);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(eval).getState() == JobState.CANCELLED);
        assertThat(job(eval).getReason()).startsWith("dependency " + train + " ended FAILED")
                .endsWith("and this job was to run after its success");
        NodeCommand cleanupStart = startOf(cleanup); // after any: runs all the same
        exit(cleanupStart, 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(cleanup).getState() == JobState.SUCCEEDED);
        // over the whole history: each dependent started once, after what it waited for; the cancelled one never
        startedOnceAfter(train, prep);
        startedOnceAfter(cleanup, train);
        assertThat(startsEver(eval)).isEmpty();

        // now that train failed, a job after its success would never run: refused at once
        StatusRuntimeException never = refusal(() -> submit(spec().addAfter(Dependency.newBuilder().setJobId(train))));
        assertThat(never.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(never.getStatus().getDescription()).contains("would never run").contains(train);
    }

    @Test
    void aJobAfterAnArrayWaitsForEveryElementAndAWaitingJobCanBeCancelled() {
        join("arrdep-host-" + model, 1);
        SubmitJobResponse array = submit(spec(), JobArray.newBuilder().setCount(2).build(), "a-" + UUID.randomUUID());
        String after = submit(spec().setName("merge").addAfter(Dependency.newBuilder().setJobId(array.getArrayId())));
        String doomed = submit(spec().setName("doomed").addAfter(Dependency.newBuilder().setJobId(array.getArrayId())));
        assertThat(job(after).getReason()).isEqualTo("waiting for " + array.getArrayId() + " (0 of 2 ended) to succeed");
        Job cancelled = jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(doomed).build());
        assertThat(cancelled.getState()).isEqualTo(JobState.CANCELLED);

        exit(startOf(array.getArrayId() + "-0"), 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(after).getReason().contains("1 of 2 ended"));
        exit(startOf(array.getArrayId() + "-1"), 0);
        startOf(after);
        assertThat(job(doomed).getState()).isEqualTo(JobState.CANCELLED);
        startedOnceAfter(after, array.getArrayId() + "-1");
        assertThat(startsEver(doomed)).isEmpty();
    }

    @Test
    void aDependencyOnAnUnknownOrAnotherTenantsJobIsRefusedNamingTheField() {
        join("foreign-host-" + model, 1);
        String mine = submit(spec());
        String other = jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant + "-b")
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec()).build()).getJob().getJobId();
        for (String id : List.of("job-nosuchjob", other)) {
            StatusRuntimeException e = refusal(() -> submit(spec().addAfter(Dependency.newBuilder().setJobId(mine))
                    .addAfter(Dependency.newBuilder().setJobId(id))));
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains("spec.after[1].job_id").contains(id);
        }
        StatusRuntimeException twice = refusal(() -> submit(spec().addAfter(Dependency.newBuilder().setJobId(mine))
                .addAfter(Dependency.newBuilder().setJobId(mine))));
        assertThat(twice.getStatus().getDescription()).contains("twice");
    }

    @Test
    void aWaitingJobRestoredByATakeoverIsReleasedWhenItsDependencySucceeds() {
        join("takeover-host-" + model, 1);
        String prep = submit(spec().setName("prep"));
        String train = submit(spec().setName("train").addAfter(Dependency.newBuilder().setJobId(prep)));
        NodeCommand start = startOf(prep);
        // a restart, or a standby that leads now, rebuilds who waits for whom from the database
        engine.takeOver().await().atMost(Duration.ofSeconds(30));
        assertThat(job(train).getState()).isEqualTo(JobState.WAITING_FOR_DEPENDENCIES);
        exit(start, 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(prep).getState() == JobState.SUCCEEDED);
        startOf(train);
        assertThat(job(train).getReason()).doesNotContain("waiting for " + prep);
        startedOnceAfter(train, prep);
    }
}
