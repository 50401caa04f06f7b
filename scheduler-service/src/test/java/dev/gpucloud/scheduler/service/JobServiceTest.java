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
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.paging.NodePages;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.RawRecords;
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
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The scheduler over real gRPC, a real broker and a real database. */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class JobServiceTest {

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    TestKafka kafka;
    /** A GPU model that only this test's hosts have, so other tests' hosts never take these jobs. */
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

    JobSpec.Builder spec(int gpus) {
        return JobSpec.newBuilder().setName("train").setWorkers(1).setGpusPerWorker(gpus).addGpuModels(model)
                .addCommand("sleep").addCommand("5");
    }

    SubmitJobResponse submit(JobSpec.Builder spec) {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec).build());
    }

    HostInventory host(String nodeId, int gpus) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(), devices, List.of(), "simulated", Instant.now());
    }

    Job job(String id) {
        return jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
    }

    // ------------------------------------------------------------------ bad input

    static Stream<Arguments> invalidRequests() {
        return Stream.of(
                Arguments.of("no tenant", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setTenant(""), "tenant"),
                Arguments.of("upper-case tenant", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setTenant("Acme"), "tenant"),
                Arguments.of("hostile tenant", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setTenant("a'; drop table jobs;--"), "tenant"),
                Arguments.of("no request id", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setClientRequestId(""), "client_request_id"),
                Arguments.of("request id too long", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setClientRequestId("x".repeat(500)), "client_request_id"),
                Arguments.of("no spec", (UnaryOperator<SubmitJobRequest.Builder>) SubmitJobRequest.Builder::clearSpec, "spec"),
                Arguments.of("no name", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setName("")), "spec.name"),
                Arguments.of("zero workers", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setWorkers(0)), "spec.workers"),
                Arguments.of("huge uint32", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setGpusPerWorker(-1)), "spec.gpus_per_worker"),
                Arguments.of("GPUs and MIG", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setMigProfile("1g.10gb")), "spec.gpusPerWorker"),
                Arguments.of("bad MIG profile", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setGpusPerWorker(0).setMigProfile("<script>")), "spec.migProfile"),
                Arguments.of("unknown enum", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setInterconnectValue(99)), "spec.interconnect"),
                Arguments.of("no command", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().clearCommand()), "spec.command"),
                Arguments.of("oversized argument", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().addCommand("y".repeat(10_000))), "spec.command"),
                Arguments.of("time limit over a year", (UnaryOperator<SubmitJobRequest.Builder>) r -> r.setSpec(r.getSpec().toBuilder().setTimeLimitSeconds(367L * 24 * 3600)), "spec.timeLimitSeconds"));
    }

    @ParameterizedTest(name = "{0}: INVALID_ARGUMENT naming {2}")
    @MethodSource("invalidRequests")
    void invalid_submission_names_the_field(String name, UnaryOperator<SubmitJobRequest.Builder> change, String field) {
        SubmitJobRequest.Builder request = SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId("r-1").setSpec(spec(1));

        assertThatThrownBy(() -> jobs.submitJob(change.apply(request).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains(field);
                });
    }

    @Test
    void oversized_message_is_refused() {
        JobSpec.Builder big = spec(1);
        for (int i = 0; i < 300; i++) {
            big.putEnv("V" + i, "z".repeat(4000));
        }
        assertThatThrownBy(() -> submit(big)).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isIn(Status.Code.RESOURCE_EXHAUSTED, Status.Code.INVALID_ARGUMENT));
    }

    @Test
    void unknown_job_is_not_found() {
        assertThatThrownBy(() -> job("job-doesnotexist")).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        assertThatThrownBy(() -> jobs.getJob(GetJobRequest.newBuilder().setJobId("").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getDescription()).contains("job_id"));
    }

    @Test
    void bad_page_token_is_invalid() {
        assertThatThrownBy(() -> jobs.listJobs(ListJobsRequest.newBuilder().setPageToken("!!nonsense").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getDescription()).contains("page_token"));
    }

    // ------------------------------------------------------------------ behaviour

    @Test
    void repeated_request_id_returns_the_first_job() {
        SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId("same-id")
                .setSpec(spec(1)).build();

        SubmitJobResponse first = jobs.submitJob(request);
        SubmitJobResponse second = jobs.submitJob(request);

        assertThat(first.getDuplicate()).isFalse();
        assertThat(second.getDuplicate()).isTrue();
        assertThat(second.getJob().getJobId()).isEqualTo(first.getJob().getJobId());
    }

    @Test
    void hosts_are_listed_a_page_at_a_time_in_node_order() {
        for (String n : List.of("c", "a", "b")) {
            String nodeId = "node-page-" + n + "-" + model;
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, 1), "test"));
        }
        var cluster = ClusterServiceGrpc.newBlockingStub(channel);
        ListNodesRequest first = ListNodesRequest.newBuilder().setGpuModel(model).setPageSize(2).build();
        await().atMost(Duration.ofSeconds(20)).until(() -> NodePages.all(first, cluster::listNodes).size() == 3);

        ListNodesResponse page1 = cluster.listNodes(first);
        assertThat(page1.getNodesList()).extracting(Node::getNodeId)
                .containsExactly("node-page-a-" + model, "node-page-b-" + model);
        assertThat(page1.getNextPageToken()).isNotEmpty();
        ListNodesResponse page2 = cluster.listNodes(first.toBuilder().setPageToken(page1.getNextPageToken()).build());
        assertThat(page2.getNodesList()).extracting(Node::getNodeId).containsExactly("node-page-c-" + model);
        assertThat(page2.getNextPageToken()).isEmpty();

        assertThatThrownBy(() -> cluster.listNodes(first.toBuilder().setPageToken("not-a-token").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("page_token");
                });
        assertThatThrownBy(() -> cluster.listNodes(first.toBuilder().setPageSize(501).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("page_size").contains("501");
                });
    }

    @Test
    void job_without_a_fitting_host_stays_pending_and_says_why() {
        String nodeId = "node-other-" + model;
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, 2), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);

        String id = submit(spec(1).clearGpuModels().addGpuModels("NO-SUCH-GPU")).getJob().getJobId();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(job(id).getReason())
                .startsWith("pending: ").contains("no NO-SUCH-GPU GPUs"));
        assertThat(job(id).getState()).isEqualTo(JobState.PENDING);
    }

    @Test
    void job_is_placed_started_and_succeeds_as_the_agent_reports() throws Exception {
        String nodeId = "node-" + model;
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        var jobEvents = kafka.tail(Topics.JOB_EVENTS.name());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, 8), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);

        String id = submit(spec(4).setInterconnect(Interconnect.INTERCONNECT_NVLINK)).getJob().getJobId();
        Iterator<JobEvent> watch = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .watchJob(WatchJobRequest.newBuilder().setJobId(id).build());

        List<ConsumerRecord<String, byte[]>> starts = commands.next(r -> r.key().equals(nodeId), 1,
                Duration.ofSeconds(20));
        assertThat(starts).hasSize(1);
        NodeCommand start = EventRecords.decode(Topics.NODE_COMMANDS, starts.get(0)).payload();
        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        assertThat(start.jobId()).isEqualTo(id);
        assertThat(start.gpuIndices()).containsExactly(0, 1, 2, 3);
        assertThat(start.command()).containsExactly("sleep", "5");
        assertThat(TopicTail.header(starts.get(0), "ce_id")).isNotBlank();
        assertThat(job(id).getState()).isEqualTo(JobState.SCHEDULED);
        assertThat(ClusterServiceGrpc.newBlockingStub(channel).getCapacity(GetCapacityRequest.getDefaultInstance())
                .getModelsList().stream().filter(m -> m.getModel().equals(model)).findFirst().orElseThrow()
                .getFreeGpus()).isEqualTo(4);

        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id,
                nodeId, AllocationEventType.STARTED, Instant.now(), null, null, null), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);
        AllocationEvent exited = new AllocationEvent(start.allocationId(), id, nodeId, AllocationEventType.EXITED,
                Instant.now(), 0, null, null);
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, exited, "test"));
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, exited, "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.SUCCEEDED);

        List<JobState> watched = new ArrayList<>();
        watch.forEachRemaining(e -> watched.add(e.getState()));
        assertThat(watched).endsWith(JobState.RUNNING, JobState.SUCCEEDED);
        List<JobState> published = jobEvents.next(r -> r.key().equals(id), 4, Duration.ofSeconds(20))
                .stream().map(r -> JobState.valueOf(EventRecords.decode(Topics.JOB_EVENTS, r).payload().state().name()))
                .toList();
        assertThat(published).containsExactly(JobState.PENDING, JobState.SCHEDULED, JobState.RUNNING, JobState.SUCCEEDED);
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodes(0).getGpusList()
                .stream().noneMatch(g -> g.getAllocated()));
    }

    @Test
    void gang_waits_until_every_worker_fits_then_a_failure_fails_it() {
        String first = "node-a-" + model;
        String second = "node-b-" + model;
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, first, host(first, 8), "test"));
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, second, host(second, 8), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 2);
        String blocker = submit(spec(8)).getJob().getJobId();
        var blockerStart = commands.next(r -> r.key().equals(first) || r.key().equals(second), 1,
                Duration.ofSeconds(20));
        NodeCommand held = EventRecords.decode(Topics.NODE_COMMANDS, blockerStart.get(0)).payload();
        assertThat(held.jobId()).isEqualTo(blocker);

        String id = submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA)).getJob().getJobId();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(job(id).getReason())
                .contains("no RDMA fabric has room for all 2 workers").contains("fabric a: room for 1 of 2 workers"));
        assertThat(commands.next(r -> r.key().equals(first) || r.key().equals(second), 1, Duration.ofSeconds(2)))
                .isEmpty();

        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, blocker, new AllocationEvent(held.allocationId(),
                blocker, held.nodeId(), AllocationEventType.EXITED, Instant.now(), 0, null, "done"), "test"));
        var starts = commands.next(r -> r.key().equals(first) || r.key().equals(second), 2,
                Duration.ofSeconds(20));
        assertThat(starts).extracting(ConsumerRecord::key).containsExactlyInAnyOrder(first, second);

        // the two STARTs go to two hosts' partitions, so they may arrive in either order
        NodeCommand worker0 = starts.stream().map(r -> EventRecords.decode(Topics.NODE_COMMANDS, r).payload())
                .filter(c -> c.rank() == 0).findFirst().orElseThrow();
        var jobEvents = kafka.tail(Topics.JOB_EVENTS.name());
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(worker0.allocationId(), id,
                worker0.nodeId(), AllocationEventType.EXITED, Instant.now(), 3, null, "boom"), "test"));
        // exit 3 is retried (within the bound): the gang stops as a whole and goes back to the queue
        var stops = commands.next(r -> r.key().equals(first) || r.key().equals(second), 1,
                Duration.ofSeconds(20));
        NodeCommand stop = EventRecords.decode(Topics.NODE_COMMANDS, stops.get(0)).payload();
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        assertThat(stop.allocationId()).isNotEqualTo(worker0.allocationId());
        var requeued = EventRecords.decode(Topics.JOB_EVENTS,
                jobEvents.next(r -> r.key().equals(id), 1, Duration.ofSeconds(20)).get(0)).payload();
        assertThat(requeued.state()).isEqualTo(dev.gpucloud.contracts.events.JobState.PENDING);
        assertThat(requeued.reason()).contains("worker 0 exited 3, retry 1 of 3");
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(stop.allocationId(), id,
                stop.nodeId(), AllocationEventType.EXITED, Instant.now(), 143, null, "stopped"), "test"));

        // placed again; exit 127 (command not found) is never retried
        var again = commands.next(r -> r.key().equals(first) || r.key().equals(second), 2, Duration.ofSeconds(20));
        assertThat(again).hasSize(2);
        NodeCommand retry0 = EventRecords.decode(Topics.NODE_COMMANDS, again.get(0)).payload();
        assertThat(retry0.type()).isEqualTo(NodeCommandType.START);
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(retry0.allocationId(), id,
                retry0.nodeId(), AllocationEventType.EXITED, Instant.now(), 127, null, "not found"), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.FAILED);
        assertThat(job(id).getExitCode()).isEqualTo(127);
        assertThat(job(id).getReason()).contains("exited 127 (not retried)");
    }

    @Test
    void host_that_leaves_sends_its_job_back_to_the_queue() {
        String nodeId = "node-gone-" + model;
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, 1), "test"));
        String id = submit(spec(1)).getJob().getJobId();
        assertThat(commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(20))).hasSize(1);

        var jobEvents = kafka.tail(Topics.JOB_EVENTS.name());

        kafka.send(EventRecords.tombstone(Topics.GPU_INVENTORY, nodeId, "test"));

        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.PENDING);
        var requeued = jobEvents.next(r -> r.key().equals(id), 1, Duration.ofSeconds(20));
        var event = EventRecords.decode(Topics.JOB_EVENTS, requeued.get(0)).payload();
        assertThat(event.state()).isEqualTo(dev.gpucloud.contracts.events.JobState.PENDING);
        assertThat(event.reason()).contains("requeued");
    }

    @Test
    void cancel_ends_a_pending_job_once() {
        String id = submit(spec(1).clearGpuModels().addGpuModels("NO-SUCH-GPU")).getJob().getJobId();

        Job cancelled = jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(id).setReason("changed my mind").build());
        Job again = jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(id).build());

        assertThat(cancelled.getState()).isEqualTo(JobState.CANCELLED);
        assertThat(again.getReason()).isEqualTo("changed my mind");
    }

    @Test
    void list_pages_through_a_tenants_jobs_newest_first() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(submit(spec(1).clearGpuModels().addGpuModels("NO-SUCH-GPU")).getJob().getJobId());
        }

        ListJobsResponse page1 = jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).setPageSize(2).build());
        ListJobsResponse page2 = jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).setPageSize(2)
                .setPageToken(page1.getNextPageToken()).build());

        assertThat(page1.getJobsList()).extracting(Job::getJobId).containsExactly(ids.get(2), ids.get(1));
        assertThat(page2.getJobsList()).extracting(Job::getJobId).containsExactly(ids.get(0));
        assertThat(page2.getNextPageToken()).isEmpty();
        assertThat(jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).addStates(JobState.RUNNING).build())
                .getJobsCount()).isZero();
    }

    @Test
    void job_requests_topic_submits_and_bad_records_are_dead_lettered() {
        var dlq = kafka.deadLetters(Topics.JOB_REQUESTS);
        var request = new dev.gpucloud.contracts.events.JobRequest(tenant, "kafka-1",
                new dev.gpucloud.contracts.events.JobSpec("from-kafka", 1, 1, null, 0, 0, 0, List.of("NO-SUCH-GPU"),
                        0, null, null, null, null, 0, null, 0, List.of("sleep", "1"), java.util.Map.of()));
        var garbage = EventRecords.record(Topics.JOB_REQUESTS, tenant, request, "test");
        kafka.send(RawRecords.withValue(garbage, "{not json"));
        kafka.send(EventRecords.record(Topics.JOB_REQUESTS, tenant, request, "test"));
        kafka.send(EventRecords.record(Topics.JOB_REQUESTS, tenant, request, "test"));
        var noHeaders = EventRecords.record(Topics.JOB_REQUESTS, tenant, request, "test");
        noHeaders.headers().remove("ce_id");
        kafka.send(noHeaders);
        kafka.send(EventRecords.record(Topics.JOB_REQUESTS, "someone-else", request, "test"));

        await().atMost(Duration.ofSeconds(20)).until(() -> jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant)
                .build()).getJobsCount() == 1);
        var dead = dlq.next(r -> tenant.equals(r.key()) || "someone-else".equals(r.key()), 3,
                Duration.ofSeconds(20));
        assertThat(dead).extracting(TopicTail::deadLetterReason)
                .anySatisfy(reason -> assertThat(reason).contains("not valid JSON"))
                .anySatisfy(reason -> assertThat(reason).contains("ce_id"))
                .anySatisfy(reason -> assertThat(reason).contains("does not match"));
    }

    @Test
    void malformed_allocation_event_is_dead_lettered_and_the_consumer_goes_on() {
        var dlq = kafka.deadLetters(Topics.ALLOCATION_EVENTS);
        String key = "job-bad-" + model;
        var missing = EventRecords.record(Topics.ALLOCATION_EVENTS, key, new AllocationEvent("a", key, "n",
                AllocationEventType.STARTED, Instant.now(), null, null, null), "test");
        String json = new String(missing.value()).replace("\"allocationId\":\"a\",", "");
        kafka.send(RawRecords.withValue(missing, json));

        kafka.send(RawRecords.record(Topics.ALLOCATION_EVENTS.name(), key, "[]"));

        // Both are dead-lettered: the consumer went on after the first.
        var dead = dlq.next(r -> key.equals(r.key()), 2, Duration.ofSeconds(20));
        assertThat(dead).hasSize(2);
        assertThat(TopicTail.deadLetterReason(dead.get(0))).contains("'allocationId'");
        assertThat(TopicTail.deadLetterReason(dead.get(1))).contains("allocation.events");
    }
}
