package dev.gpucloud.scheduler.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
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
 * The production lifecycle through the service, a real broker and a real database: admission,
 * spot notices, preemption, a gang that loses a host, MIG and fractional placement, capacity.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class LifecycleServiceTest {

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

    @BeforeEach
    void connect() {
        unread.clear();
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        kafka = new TestKafka();
        commands = kafka.tail(Topics.NODE_COMMANDS.name());
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "A100-SXM4-80GB-TEST-" + run;
        tenant = "t-" + run;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    JobSpec.Builder spec(int gpus) {
        return JobSpec.newBuilder().setName("train").setWorkers(1).setGpusPerWorker(gpus).addGpuModels(model)
                .addCommand("python").addCommand("train.py");
    }

    String submit(JobSpec.Builder spec) {
        return jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(spec).build()).getJob().getJobId();
    }

    Job job(String id) {
        return jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
    }

    HostInventory host(String nodeId, int gpus, CapacityType capacity, String fabric, boolean mig) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 81_920, null, 0, mig, List.of()));
        }
        return new HostInventory(nodeId, nodeId + ".test", "p4de.24xlarge", "zone-" + nodeId, capacity,
                capacity == CapacityType.SPOT ? 12_000_000 : 40_960_000, 96_000, 1_000_000, fabric,
                fabric == null ? List.of() : List.of("spine-1", "leaf-" + nodeId), devices, List.of(), "simulated",
                Instant.now());
    }

    void join(HostInventory... hosts) {
        for (HostInventory h : hosts) {
            kafka.send(EventRecords.record(Topics.GPU_INVENTORY, h.nodeId(), h, "test"));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == hosts.length);
    }

    /** Commands read from the topic but not yet asked for: the outbox may publish a gang's commands together. */
    final java.util.ArrayDeque<NodeCommand> unread = new java.util.ArrayDeque<>();

    /** The next command for any of the hosts, decoded. */
    NodeCommand nextCommand(String... nodes) {
        return nextCommand(Duration.ofSeconds(20), nodes);
    }

    /** The next command for any of the hosts within {@code atMost}, decoded. */
    NodeCommand nextCommand(Duration atMost, String... nodes) {
        List<String> keys = List.of(nodes);
        for (var it = unread.iterator(); it.hasNext(); ) {
            NodeCommand c = it.next();
            if (keys.contains(c.nodeId())) {
                it.remove();
                return c;
            }
        }
        List<ConsumerRecord<String, byte[]>> got = commands.next(r -> keys.contains(r.key()), 1, atMost);
        assertThat(got).as("a node command for %s", keys).isNotEmpty();
        got.subList(1, got.size()).forEach(r -> unread.add(EventRecords.decode(Topics.NODE_COMMANDS, r).payload()));
        return EventRecords.decode(Topics.NODE_COMMANDS, got.get(0)).payload();
    }

    void report(NodeCommand c, AllocationEventType type, Integer exit, String checkpoint) {
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, c.jobId(), new AllocationEvent(c.allocationId(),
                c.jobId(), c.nodeId(), type, Instant.now(), exit, checkpoint, "test"), "test"));
    }

    void nodeEvent(String nodeId, NodeEventType type, Instant deadline) {
        kafka.send(EventRecords.record(Topics.NODE_EVENTS, nodeId, new NodeEvent(nodeId, type, Instant.now(), deadline,
                null, null, "test"), "test"));
    }

    /** Reconciliation acts on a scheduling pass: within the reschedule interval after the grace, and a margin. */
    static final Duration RECONCILED = Duration.ofSeconds(60);

    /** Sends host {@code nodeId}'s telemetry, saying it runs {@code running}, once a second until stopped. */
    AutoCloseable reporting(String nodeId, java.util.function.Supplier<List<AllocationReport>> running) {
        var timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        timer.scheduleAtFixedRate(() -> kafka.send(EventRecords.record(Topics.GPU_TELEMETRY, nodeId,
                new TelemetrySample(nodeId, nodeId, Instant.now(), List.of(), running.get()), "test")), 0, 1,
                TimeUnit.SECONDS);
        return () -> {
            timer.shutdownNow();
            timer.awaitTermination(5, TimeUnit.SECONDS);
        };
    }

    @Test
    void aGpuItsAgentRunsAnUnknownAllocationOnTakesNoWorkUntilTheAllocationIsStopped() throws Exception {
        String node = "orphan-host-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        var running = new java.util.concurrent.atomic.AtomicReference<List<AllocationReport>>(List.of(
                new AllocationReport("orphan-" + model, "job-gone", "someone", List.of(0), null, null, 1000)));
        try (AutoCloseable telemetry = reporting(node, running::get)) {
            NodeCommand stop = nextCommand(RECONCILED, node);
            assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
            assertThat(stop.allocationId()).isEqualTo("orphan-" + model);
            assertThat(stop.reason()).contains("is not one this scheduler runs");

            String waiting = submit(spec(1));
            Thread.sleep(2_000);
            assertThat(job(waiting).getState()).as("the only GPU is busy with the orphan").isEqualTo(JobState.PENDING);

            running.set(List.of()); // the agent stopped it
            NodeCommand start = nextCommand(RECONCILED, node);
            while (start.type() == NodeCommandType.STOP) { // a repeat of the stop, sent before the host's last report
                start = nextCommand(RECONCILED, node);
            }
            assertThat(start.type()).isEqualTo(NodeCommandType.START);
            assertThat(start.jobId()).isEqualTo(waiting);
            assertThat(start.gpuIndices()).containsExactly(0);
        }
    }

    /**
     * The 1,000-host fault run's failure (seed 33322551121764): the host ran an allocation the scheduler had lost
     * to its silence, and refused the job's next START on that GPU; the scheduler took the refusal for the job's
     * failure, spent its retries in half a second on the same busy GPU, and would have failed it. Now a START
     * refused because its GPU is busy is LOST (the placement's doing): the job goes back to the queue without
     * spending a retry, and waits for the GPU until its host no longer reports the holder.
     */
    @Test
    void aStartRefusedForABusyGpuRequeuesWithoutARetryAndWaitsUntilTheGpuIsFree() throws Exception {
        String node = "busy-host-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        String id = submit(spec(1));
        NodeCommand start = nextCommand(node);
        String stray = "late-start-" + model;
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, start.jobId(), AllocationEvent.busy(
                start.allocationId(), start.jobId(), node, Instant.now(), "cannot start: GPU 0 on " + node
                        + " is busy with " + stray, List.of(stray)), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.PENDING);
        assertThat(job(id).getReason()).contains("was lost").doesNotContain("retry");

        var running = new java.util.concurrent.atomic.AtomicReference<List<AllocationReport>>(List.of(
                new AllocationReport(stray, "job-gone", "someone", List.of(0), null, null, 1000)));
        try (AutoCloseable telemetry = reporting(node, running::get)) {
            Thread.sleep(3_000);
            assertThat(job(id).getState()).as("its only GPU is busy with " + stray).isEqualTo(JobState.PENDING);

            running.set(List.of()); // the holder ended
            NodeCommand again = nextCommand(RECONCILED, node);
            while (again.type() == NodeCommandType.STOP) { // the stray allocation is stopped as unknown meanwhile
                assertThat(again.allocationId()).isEqualTo(stray);
                again = nextCommand(RECONCILED, node);
            }
            assertThat(again.type()).isEqualTo(NodeCommandType.START);
            assertThat(again.jobId()).isEqualTo(id);
            assertThat(again.allocationId()).as("a new attempt").isNotEqualTo(start.allocationId());
        }
    }

    /**
     * A START held up in the broker reaches its host after its start-by time, and the host does not start it. The
     * scheduler has not counted it lost, so it sends the START again with a new start-by time: the late command
     * costs the job no attempt (the 1,000-host fault run's probes, whose STARTs waited out a broker outage).
     */
    @Test
    void aStartThatCameLateIsSentAgainWhileTheSchedulerStillHoldsIt() {
        String node = "late-host-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        String id = submit(spec(1));
        NodeCommand start = nextCommand(node);
        assertThat(start.deadline()).as("a START says by when to start it").isAfter(Instant.now());

        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, start.jobId(), AllocationEvent.late(
                start.allocationId(), start.jobId(), node, Instant.now(), "cannot start: the START came late",
                start.deadline().minusSeconds(60)), "test"));

        NodeCommand again = nextCommand(node);
        assertThat(again.type()).isEqualTo(NodeCommandType.START);
        assertThat(again.allocationId()).as("the same allocation, not a new attempt").isEqualTo(start.allocationId());
        assertThat(again.commandId()).isNotEqualTo(start.commandId());
        assertThat(again.deadline()).isAfter(Instant.now());
        report(again, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);
        assertThat(job(id).getPlacementList()).singleElement()
                .satisfies(w -> assertThat(w.getAllocationId()).isEqualTo(start.allocationId()));
    }

    @Test
    void anAllocationItsAgentNoLongerReportsIsAskedAboutAndLostOnlyOnTheAgentsWord() throws Exception {
        String node = "forgetful-host-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        String id = submit(spec(1));
        NodeCommand start = nextCommand(node);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);
        try (AutoCloseable telemetry = reporting(node, List::of)) {
            NodeCommand ask = nextCommand(RECONCILED, node);
            assertThat(ask.type()).isEqualTo(NodeCommandType.STATUS);
            assertThat(ask.allocationId()).isEqualTo(start.allocationId());
            assertThat(ask.reason()).contains("has not reported allocation");
            assertThat(job(id).getState()).as("absence alone loses nothing").isEqualTo(JobState.RUNNING);

            report(ask, AllocationEventType.LOST, null, null); // the agent's word: it does not run it
            await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() != JobState.RUNNING);
            NodeCommand again = nextCommand(RECONCILED, node);
            while (again.type() == NodeCommandType.STATUS) {
                again = nextCommand(RECONCILED, node);
            }
            assertThat(again.type()).isEqualTo(NodeCommandType.START);
            assertThat(again.jobId()).isEqualTo(id);
        }
    }

    @Test
    void anAllocationItsAgentReportsRunningCountsAsStartedWhenItsStartedEventWasMissed() throws Exception {
        String node = "quiet-starter-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        String id = submit(spec(1));
        NodeCommand start = nextCommand(node);
        assertThat(job(id).getState()).isEqualTo(JobState.SCHEDULED);
        try (AutoCloseable telemetry = reporting(node, () -> List.of(new AllocationReport(start.allocationId(),
                start.jobId(), start.tenant(), start.gpuIndices(), null, null, 1000)))) {
            await().atMost(RECONCILED).until(() -> job(id).getState() == JobState.RUNNING);
        }
    }

    @Test
    void aJobThatCannotBeStoredAsPlacedFailsAloneAndTheRestOfItsPassIsPlaced() throws Exception {
        String node = "poison-pass-" + model;
        String poisoned = submit(spec(1));
        String healthy = submit(spec(1));
        String url = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.datasource.jdbc.url", String.class);
        try (var c = java.sql.DriverManager.getConnection(url, "gpucloud", "gpucloud");
                var st = c.prepareStatement("update jobs set spec_json = '{\"name\": 1' where id = ?")) {
            st.setString(1, poisoned); // a row the scheduler can no longer read
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        join(host(node, 2, CapacityType.ON_DEMAND, null, false)); // both fit now, in one pass
        NodeCommand start = nextCommand(node);
        assertThat(start.type()).isEqualTo(NodeCommandType.START);
        assertThat(start.jobId()).isEqualTo(healthy);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(healthy).getState() == JobState.SCHEDULED);
        assertThat(jobs.listJobs(dev.gpucloud.contracts.grpc.v1.ListJobsRequest.newBuilder().setTenant(tenant).build())
                .getJobsList()).filteredOn(j -> j.getJobId().equals(poisoned)).singleElement().satisfies(j -> {
                    assertThat(j.getState()).isEqualTo(JobState.FAILED);
                    assertThat(j.getReason()).startsWith("could not be scheduled: MalformedEventException")
                            .doesNotContain("insert into");
                });
    }

    @Test
    void aPlacedJobWhoseSpecCanNoLongerBeReadFailsAloneWhenItsWorkerReportsAndTheNextJobIsPlaced() throws Exception {
        String node = "poison-placed-" + model;
        join(host(node, 1, CapacityType.ON_DEMAND, null, false));
        String poisoned = submit(spec(1));
        NodeCommand start = nextCommand(node);
        assertThat(start.jobId()).isEqualTo(poisoned);
        String url = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.datasource.jdbc.url", String.class);
        try (var c = java.sql.DriverManager.getConnection(url, "gpucloud", "gpucloud");
                var st = c.prepareStatement("update jobs set spec_json = '{\"name\": 1' where id = ?")) {
            st.setString(1, poisoned); // a row the scheduler can no longer read, while its worker runs
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(poisoned).getState() == JobState.FAILED);
        assertThat(job(poisoned).getReason()).startsWith("its stored spec cannot be read");
        assertThat(nextCommand(node).type()).as("its worker is stopped").isEqualTo(NodeCommandType.STOP);
        report(start, AllocationEventType.EXITED, 143, null);

        String next = submit(spec(1));
        NodeCommand nextStart = nextCommand(node);
        assertThat(nextStart.type()).isEqualTo(NodeCommandType.START);
        assertThat(nextStart.jobId()).as("nothing else stalled behind it").isEqualTo(next);
    }

    @Test
    void whatNoHostCouldEverRunIsRefusedAtSubmit() {
        join(host("f1-" + model, 8, CapacityType.ON_DEMAND, "f1", false));
        assertThatThrownBy(() -> submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).isEqualTo(
                            "unschedulable: gang of 2 workers is larger than any RDMA fabric (the largest holds 1)");
                });
        assertThatThrownBy(() -> submit(spec(16)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
                        .isEqualTo("unschedulable: no host of the fleet can take even one worker of this shape"));
        assertThatThrownBy(() -> submit(spec(0).setMigProfile("7g.99gb")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).isEqualTo("unschedulable: unknown MIG profile 7g.99gb");
                });
        SubmitJobRequest once = SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId("same")
                .setSpec(spec(1)).build();
        jobs.submitJob(once);
        assertThatThrownBy(() -> jobs.submitJob(once.toBuilder().setSpec(spec(2)).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
                    assertThat(e.getStatus().getDescription()).contains("client_request_id 'same' was already used");
                });
    }

    @Test
    void anUnknownTenantIsRefused() {
        // the test profile admits tenants t-* and quota-capped only
        assertThatThrownBy(() -> jobs.submitJob(SubmitJobRequest.newBuilder().setTenant("stranger")
                .setClientRequestId("r").setSpec(spec(1)).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(e.getStatus().getDescription()).isEqualTo("unknown tenant 'stranger'");
                });
    }

    @Test
    void aTenantOverItsHardQuotaIsRefused() {
        // application.properties gives tenant quota-capped a hard quota of 2 GPUs in the test profile
        SubmitJobRequest.Builder r = SubmitJobRequest.newBuilder().setTenant("quota-capped")
                .setSpec(spec(2).clearGpuModels().addGpuModels("NOT-HERE-" + model));
        jobs.submitJob(r.setClientRequestId(UUID.randomUUID().toString()).build());
        assertThatThrownBy(() -> jobs.submitJob(r.setClientRequestId(UUID.randomUUID().toString()).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getStatus().getDescription()).isEqualTo("tenant quota-capped would exceed its hard GPU"
                            + " quota: 2 GPUs, 2 running or queued, this job asks 2");
                });
    }

    @Test
    void aSpotNoticeCheckpointsTheJobAndItResumesOnOnDemand() {
        String spotHost = "spot-" + model;
        String odHost = "od-" + model;
        join(host(spotHost, 8, CapacityType.SPOT, null, false), host(odHost, 8, CapacityType.ON_DEMAND, null, false));
        String id = submit(spec(8).setCapacity(CapacityPreference.CAPACITY_SPOT_PREFERRED));
        NodeCommand start = nextCommand(spotHost, odHost);
        assertThat(start.nodeId()).isEqualTo(spotHost);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        Instant reclaim = Instant.now().plusSeconds(120);
        nodeEvent(spotHost, NodeEventType.SPOT_INTERRUPTION, reclaim);
        NodeCommand checkpoint = nextCommand(spotHost);
        assertThat(checkpoint.type()).isEqualTo(NodeCommandType.CHECKPOINT);
        assertThat(checkpoint.deadline()).isEqualTo(reclaim.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.CHECKPOINTING);

        report(start, AllocationEventType.CHECKPOINT_SAVED, null, "s3://ckpt/" + id + "/step-42");
        NodeCommand stop = nextCommand(spotHost);
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        NodeCommand resumed = nextCommand(odHost);
        assertThat(resumed.type()).isEqualTo(NodeCommandType.START);
        assertThat(resumed.resumeFrom()).isEqualTo("s3://ckpt/" + id + "/step-42");
        assertThat(resumed.allocationId()).isNotEqualTo(start.allocationId());
        Job after = job(id);
        assertThat(after.getState()).isEqualTo(JobState.SCHEDULED);
        assertThat(after.getResumeFrom()).isEqualTo("s3://ckpt/" + id + "/step-42");
        report(start, AllocationEventType.EXITED, 143, null); // the old worker stops: no effect on the new run
        report(resumed, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);
    }

    @Test
    void anOperatorsDrainMovesTheJobOffAfterItsCheckpointAndTheCordonOutlivesATakeover() {
        String a = "drain-a-" + model;
        String b = "drain-b-" + model;
        join(host(a, 8, CapacityType.ON_DEMAND, null, false), host(b, 8, CapacityType.ON_DEMAND, null, false));
        var cluster = ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        String id = submit(spec(8));
        NodeCommand start = nextCommand(a, b);
        String drainedHost = start.nodeId();
        String otherHost = drainedHost.equals(a) ? b : a;
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        var drained = cluster.drainNode(DrainNodeRequest.newBuilder().setNodeId(drainedHost)
                .setReason("replace NIC").setGraceSeconds(300).build());

        assertThat(drained.getJobsMovingList()).containsExactly(id);
        assertThat(drained.getNode().getCordonReason()).isEqualTo("replace NIC");
        NodeCommand checkpoint = nextCommand(drainedHost);
        assertThat(checkpoint.type()).isEqualTo(NodeCommandType.CHECKPOINT);
        assertThat(job(id).getReason()).contains("drained by an operator: replace NIC");
        report(start, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + id + "/7");
        assertThat(nextCommand(drainedHost).type()).isEqualTo(NodeCommandType.STOP);
        NodeCommand resumed = nextCommand(otherHost);
        assertThat(resumed.type()).isEqualTo(NodeCommandType.START);
        assertThat(resumed.resumeFrom()).isEqualTo("/ckpt/" + id + "/7");
        report(start, AllocationEventType.EXITED, 143, null);
        report(resumed, AllocationEventType.STARTED, null, null);

        // a takeover (a restart, or a standby that leads now) keeps the cordon: it is in the database
        engine.takeOver().await().atMost(Duration.ofSeconds(30));
        var listed = cluster.listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesList();
        assertThat(listed).filteredOn(n -> n.getNodeId().equals(drainedHost)).singleElement()
                .satisfies(n -> assertThat(n.getCordonReason()).isEqualTo("replace NIC"));
        String waiting = submit(spec(8));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(waiting).getReason().contains("cordoned by an operator"));
        assertThat(job(waiting).getState()).isEqualTo(JobState.PENDING);

        var undrained = cluster.undrainNode(UndrainNodeRequest.newBuilder().setNodeId(drainedHost).build());

        assertThat(undrained.getChanged()).isTrue();
        NodeCommand placed = nextCommand(drainedHost);
        assertThat(placed.type()).isEqualTo(NodeCommandType.START);
        assertThat(placed.jobId()).isEqualTo(waiting);
    }

    @Test
    void aCordonKeepsNewWorkOffButLetsWhatRunsThereRun() {
        String node = "cordon-" + model;
        join(host(node, 8, CapacityType.ON_DEMAND, null, false));
        var cluster = ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        String running = submit(spec(4));
        NodeCommand start = nextCommand(node);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(running).getState() == JobState.RUNNING);

        var cordoned = cluster.cordonNode(CordonNodeRequest.newBuilder().setNodeId(node).setReason("firmware").build());

        assertThat(cordoned.getJobsMovingList()).isEmpty();
        String waiting = submit(spec(4));
        await().atMost(Duration.ofSeconds(20)).until(() -> job(waiting).getReason().contains("cordoned by an operator"));
        assertThat(job(running).getState()).isEqualTo(JobState.RUNNING);
        assertThat(statusCode(() -> cluster.cordonNode(CordonNodeRequest.newBuilder().setNodeId("no-such-" + model)
                .setReason("x").build()))).isEqualTo(Status.Code.NOT_FOUND);
        cluster.undrainNode(UndrainNodeRequest.newBuilder().setNodeId(node).build());
        assertThat(nextCommand(node).jobId()).isEqualTo(waiting);
    }

    static Status.Code statusCode(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
        throw new AssertionError("the call succeeded");
    }

    /** A LOW job running on its own 8-GPU host, and a HIGH one that preempts it: the CHECKPOINT was sent. */
    record Preemption(String node, String low, NodeCommand lowStart, String high, NodeCommand checkpoint) {
    }

    Preemption preemption(String node) {
        join(host(node, 8, CapacityType.ON_DEMAND, null, false));
        String low = submit(spec(8).setPriority(PriorityClass.PRIORITY_LOW));
        NodeCommand lowStart = nextCommand(node);
        report(lowStart, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(low).getState() == JobState.RUNNING);
        String high = submit(spec(8).setPriority(PriorityClass.PRIORITY_HIGH));
        return new Preemption(node, low, lowStart, high, nextCommand(node));
    }

    @Test
    void aHighPriorityJobPreemptsALowOneAfterItsCheckpoint() {
        Preemption p = preemption("pre-" + model);
        String node = p.node();
        String low = p.low();
        String high = p.high();
        NodeCommand lowStart = p.lowStart();
        NodeCommand checkpoint = p.checkpoint();
        assertThat(checkpoint.type()).isEqualTo(NodeCommandType.CHECKPOINT);
        assertThat(checkpoint.jobId()).isEqualTo(low);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(job(high).getReason())
                .containsAnyOf("preempting 1 lower-priority job(s)", "waiting for preempted jobs to checkpoint"));

        var events = kafka.tail(Topics.JOB_EVENTS.name());
        report(lowStart, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + low + "/1");
        assertThat(nextCommand(node).type()).isEqualTo(NodeCommandType.STOP);
        var requeued = EventRecords.decode(Topics.JOB_EVENTS,
                events.next(r -> r.key().equals(low), 1, Duration.ofSeconds(20)).get(0)).payload();
        assertThat(requeued.state()).isEqualTo(dev.gpucloud.contracts.events.JobState.PENDING);
        assertThat(requeued.reason()).contains("preempted by " + high).contains("resumes from /ckpt/" + low + "/1");
        assertThat(requeued.resumeFrom()).isEqualTo("/ckpt/" + low + "/1");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(job(low).getReason())
                .startsWith("pending: ").contains("(requeued: preempted by " + high));
        report(lowStart, AllocationEventType.EXITED, 143, null);
        NodeCommand highStart = nextCommand(node);
        assertThat(highStart.type()).isEqualTo(NodeCommandType.START);
        assertThat(highStart.jobId()).isEqualTo(high);
    }

    /**
     * Least attained service within a class: a job that saves checkpoints and has received much GPU service
     * yields its host to a new job of its own class (it checkpoints, stops, and queues again with the service
     * it received counted), instead of the new job waiting for it to end.
     */
    @Test
    void aWellServedJobThatCheckpointsYieldsToANewJobOfItsClass() throws Exception {
        String node = "las-" + model;
        join(host(node, 8, CapacityType.ON_DEMAND, null, false));
        String served = submit(spec(8).setCheckpoint(dev.gpucloud.contracts.grpc.v1.CheckpointPolicy.newBuilder()
                .setIntervalSeconds(600).setLocation("s3://ckpt")));
        NodeCommand start = nextCommand(node);
        report(start, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(served).getState() == JobState.RUNNING);
        // as if it had run for days: its service and its start, as stored, read back by a takeover
        String url = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.datasource.jdbc.url", String.class);
        try (var c = java.sql.DriverManager.getConnection(url, "gpucloud", "gpucloud");
                var st = c.prepareStatement("update jobs set attained_gpu_seconds = 10000000,"
                        + " running_since = now() - interval '2 hours' where id = ?")) {
            st.setString(1, served);
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        engine.takeOver().await().atMost(Duration.ofSeconds(30));

        String fresh = submit(spec(8));
        NodeCommand checkpoint = nextCommand(node);
        assertThat(checkpoint.type()).isEqualTo(NodeCommandType.CHECKPOINT);
        assertThat(checkpoint.jobId()).isEqualTo(served);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(job(served).getReason())
                .contains("yields to " + fresh + " of its class, which has received less GPU service"));
        report(start, AllocationEventType.CHECKPOINT_SAVED, null, "s3://ckpt/" + served + "/1");
        assertThat(nextCommand(node).type()).isEqualTo(NodeCommandType.STOP);
        report(start, AllocationEventType.EXITED, 143, null);
        NodeCommand freshStart = nextCommand(node);
        assertThat(freshStart.type()).isEqualTo(NodeCommandType.START);
        assertThat(freshStart.jobId()).isEqualTo(fresh);
        assertThat(job(served).getState()).isEqualTo(JobState.PENDING);
        try (var c = java.sql.DriverManager.getConnection(url, "gpucloud", "gpucloud");
                var st = c.prepareStatement("select attained_gpu_seconds, requeued_at is not null from jobs where id = ?")) {
            st.setString(1, served);
            try (var rs = st.executeQuery()) {
                assertThat(rs.next()).isTrue();
                // its two hours on 8 GPUs count on top of what it had
                assertThat(rs.getLong(1)).isBetween(10_000_000L + 2 * 3600 * 8, 10_000_000L + 3 * 3600 * 8);
                assertThat(rs.getBoolean(2)).isTrue();
            }
        }
    }

    /**
     * A takeover replays the rows the live scheduler wrote, so a job asked to checkpoint keeps the request it
     * was given (its reason, deadline and preemptor), not a new one made up at the restart.
     */
    @Test
    void aPreemptedJobKeepsItsStopRequestAcrossATakeover() {
        Preemption p = preemption("takeover-" + model);
        String node = p.node();
        String low = p.low();
        String high = p.high();
        NodeCommand lowStart = p.lowStart();
        assertThat(p.checkpoint().type()).isEqualTo(NodeCommandType.CHECKPOINT);

        String restored = engine.takeOver().await().atMost(Duration.ofSeconds(30));
        assertThat(restored).contains("held allocation(s)");

        var events = kafka.tail(Topics.JOB_EVENTS.name());
        report(lowStart, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + low + "/1");
        NodeCommand stop = nextCommand(node);
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        var requeued = EventRecords.decode(Topics.JOB_EVENTS,
                events.next(r -> r.key().equals(low), 1, Duration.ofSeconds(20)).get(0)).payload();
        assertThat(requeued.reason()).contains("preempted by " + high).contains("after its checkpoint")
                .doesNotContain("restarted");
        report(lowStart, AllocationEventType.EXITED, 143, null);
        NodeCommand highStart = nextCommand(node);
        assertThat(highStart.type()).isEqualTo(NodeCommandType.START);
        assertThat(highStart.jobId()).isEqualTo(high);
    }

    @Test
    void aGangThatLosesAHostStopsAndResumesAsAWhole() {
        String a = "ga-" + model;
        String b = "gb-" + model;
        String c = "gc-" + model;
        join(host(a, 8, CapacityType.ON_DEMAND, "g", false), host(b, 8, CapacityType.ON_DEMAND, "g", false),
                host(c, 8, CapacityType.ON_DEMAND, "g", false));
        String id = submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA));
        NodeCommand w0 = nextCommand(a, b, c);
        NodeCommand w1 = nextCommand(a, b, c);
        report(w0, AllocationEventType.STARTED, null, null);
        report(w1, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        nodeEvent(w1.nodeId(), NodeEventType.HEARTBEAT_LOST, null);
        NodeCommand stop = nextCommand(w0.nodeId());
        assertThat(stop.type()).isEqualTo(NodeCommandType.STOP);
        assertThat(stop.allocationId()).isEqualTo(w0.allocationId());
        assertThat(commands.matching(r -> r.key().equals(w1.nodeId())).stream()
                .map(r -> EventRecords.decode(Topics.NODE_COMMANDS, r).payload())
                .filter(cmd -> cmd.type() == NodeCommandType.STOP).toList())
                .as("the lost worker's host is told to stop it too, should it still run it or start it late")
                .singleElement().satisfies(cmd -> {
                    assertThat(cmd.allocationId()).isEqualTo(w1.allocationId());
                    assertThat(cmd.reason()).contains("lost its heartbeat");
                });
        report(w0, AllocationEventType.EXITED, 143, null);
        String spare = List.of(a, b, c).stream().filter(n -> !n.equals(w0.nodeId()) && !n.equals(w1.nodeId()))
                .findFirst().orElseThrow();
        NodeCommand r0 = nextCommand(a, b, c);
        NodeCommand r1 = nextCommand(a, b, c);
        assertThat(List.of(r0.type(), r1.type())).containsOnly(NodeCommandType.START);
        assertThat(List.of(r0.nodeId(), r1.nodeId())).contains(spare);
        assertThat(job(id).getReason()).contains(spare);
    }

    @Test
    void migSlicesAndFractionsArePlacedAndCapacityIsByFabric() {
        String migHost = "mig-" + model;
        String shared = "frac-" + model;
        join(host(migHost, 1, CapacityType.ON_DEMAND, "m", true), host(shared, 1, CapacityType.ON_DEMAND, null, false));
        submit(spec(0).setMigProfile("3g.40gb"));
        NodeCommand slice = nextCommand(migHost, shared);
        assertThat(slice.nodeId()).isEqualTo(migHost);
        assertThat(slice.migInstanceUuid()).isEqualTo("3g.40gb@4");
        assertThat(slice.migSlot()).contains(new NodeCommand.MigSlot("3g.40gb", 4));
        // until the agent says which instance it ran on, the job shows the slot; then the instance's UUID
        assertThat(job(slice.jobId()).getPlacement(0).getMigInstance()).isEqualTo("3g.40gb@4");
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, slice.jobId(), new AllocationEvent(slice.allocationId(),
                slice.jobId(), slice.nodeId(), AllocationEventType.STARTED, Instant.now(), null, null, "test",
                "MIG-5e1f0c2a-test"), "test"));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Job running = job(slice.jobId());
            assertThat(running.getState()).isEqualTo(JobState.RUNNING);
            assertThat(running.getPlacement(0).getMigInstance()).isEqualTo("MIG-5e1f0c2a-test");
        });
        submit(spec(0).setMilliGpu(250));
        submit(spec(0).setMilliGpu(500));
        NodeCommand f1 = nextCommand(shared);
        NodeCommand f2 = nextCommand(shared);
        assertThat(List.of(f1.milliGpu(), f2.milliGpu())).containsExactlyInAnyOrder(250, 500);
        assertThat(f1.gpuIndices()).isEqualTo(f2.gpuIndices());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            var capacity = ClusterServiceGrpc.newBlockingStub(channel).getCapacity(GetCapacityRequest.getDefaultInstance());
            var mine = capacity.getModelsList().stream().filter(m -> m.getModel().equals(model)).toList();
            assertThat(mine).extracting(m -> m.getRdmaFabric()).containsExactlyInAnyOrder("", "m");
            var frac = mine.stream().filter(m -> m.getRdmaFabric().isEmpty()).findFirst().orElseThrow();
            assertThat(frac.getFreeGpus()).isZero();
            assertThat(frac.getFreeMilli()).isEqualTo(250);
            var sliced = mine.stream().filter(m -> m.getRdmaFabric().equals("m")).findFirst().orElseThrow();
            assertThat(sliced.getFreeMilli()).isEqualTo(500);
        });
    }

    @Test
    void aGangCheckpointCountsOnlyOnceEveryWorkerSavedIt() {
        String a = "ca-" + model;
        String b = "cb-" + model;
        join(host(a, 8, CapacityType.ON_DEMAND, "c", false), host(b, 8, CapacityType.ON_DEMAND, "c", false));
        String id = submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA));
        NodeCommand w0 = nextCommand(a, b);
        NodeCommand w1 = nextCommand(a, b);
        report(w0, AllocationEventType.STARTED, null, null);
        report(w1, AllocationEventType.STARTED, null, null);
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getState() == JobState.RUNNING);

        // rank 0 finished step 200, rank 1 only step 100: the gang's checkpoint is step 100
        report(w0, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + id + "/step-100");
        report(w0, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + id + "/step-200");
        report(w0, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + id + "/step-200"); // a repeat
        report(w1, AllocationEventType.CHECKPOINT_SAVED, null, "/ckpt/" + id + "/step-100");
        await().atMost(Duration.ofSeconds(20)).until(() -> job(id).getResumeFrom().equals("/ckpt/" + id + "/step-100"));

        // a lost host requeues the gang; it resumes from the step both workers saved, not rank 0's newer one
        nodeEvent(w1.nodeId(), NodeEventType.HEARTBEAT_LOST, null);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Job requeued = job(id);
            assertThat(requeued.getReason()).contains("resumes from /ckpt/" + id + "/step-100");
            assertThat(requeued.getResumeFrom()).isEqualTo("/ckpt/" + id + "/step-100");
        });
    }

    @Test
    void aHostWhoseRdmaPortsAreAllDownTakesNoMultiHostRdmaWork() {
        String up = "ru-" + model;
        String down = "rd-" + model;
        HostInventory healthy = host(up, 8, CapacityType.ON_DEMAND, "r", false)
                .withRdmaNics(List.of(new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", 200)));
        HostInventory dead = host(down, 8, CapacityType.ON_DEMAND, "r", false)
                .withRdmaNics(List.of(new RdmaNic("mlx5_0", 1, "DOWN", "InfiniBand", 200),
                        new RdmaNic("mlx5_1", 1, "INIT", "InfiniBand", 200)));
        join(healthy, dead);
        // the fabric holds one usable host now, so no 2-host RDMA gang could ever run: refused at submit
        assertThatThrownBy(() -> submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
                        .isEqualTo("unschedulable: gang of 2 workers is larger than any RDMA fabric (the largest holds 1)"));
        // the port comes back: the host's next description makes it a fabric member again
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, down,
                dead.withRdmaNics(List.of(new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", 200))), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesList().stream()
                .allMatch(n -> n.getRdmaFabric().equals("r")));
        submit(spec(8).setWorkers(2).setInterconnect(Interconnect.INTERCONNECT_RDMA));
        NodeCommand w0 = nextCommand(up, down);
        NodeCommand w1 = nextCommand(up, down);
        assertThat(List.of(w0.nodeId(), w1.nodeId())).containsExactlyInAnyOrder(up, down);
    }

    /**
     * Submissions that arrive together are accepted in one transaction: a request id repeated inside
     * the group still yields one job, and a hard quota counts the group's earlier jobs.
     */
    @Test
    void concurrentSubmissionsAreGroupCommittedWithoutLosingIdempotencyOrQuota() throws Exception {
        join(host("gc-" + model, 8, CapacityType.ON_DEMAND, null, false));
        JobServiceGrpc.JobServiceFutureStub async = JobServiceGrpc.newFutureStub(channel);
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<com.google.common.util.concurrent.ListenableFuture<dev.gpucloud.contracts.grpc.v1.SubmitJobResponse>> same =
                new ArrayList<>();
        List<com.google.common.util.concurrent.ListenableFuture<dev.gpucloud.contracts.grpc.v1.SubmitJobResponse>> capped =
                new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            same.add(async.withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder()
                    .setTenant(tenant).setClientRequestId("same-" + run).setSpec(spec(1)).build()));
            // application.properties gives tenant quota-group a hard quota of 4 GPUs in the test profile
            capped.add(async.withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder()
                    .setTenant("quota-group").setClientRequestId("cap-" + run + "-" + i).setSpec(spec(1)).build()));
        }
        List<String> ids = new ArrayList<>();
        int duplicates = 0;
        for (var f : same) {
            var response = f.get(30, TimeUnit.SECONDS);
            ids.add(response.getJob().getJobId());
            duplicates += response.getDuplicate() ? 1 : 0;
        }
        assertThat(ids).containsOnly(ids.get(0));
        assertThat(duplicates).isEqualTo(9);
        int admitted = 0;
        int refused = 0;
        for (var f : capped) {
            try {
                f.get(30, TimeUnit.SECONDS);
                admitted++;
            } catch (java.util.concurrent.ExecutionException e) {
                assertThat(Status.fromThrowable(e.getCause()).getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                refused++;
            }
        }
        assertThat(admitted).isEqualTo(4);
        assertThat(refused).isEqualTo(6);
    }
}
