package dev.gpucloud.scheduler.service.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobRequest;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.tracing.JobTrace;
import dev.gpucloud.contracts.tracing.LoggedSpan;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The scheduler's part of a job's trace, over real gRPC, Kafka and PostgreSQL: the caller's traceparent (gRPC
 * metadata, or a job.requests record's header) is the parent of the job's spans, which reach node.commands and
 * job.events in each record's traceparent header and the service's span log (target/spans in tests).
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class JobTraceTest {

    private static final Path SPAN_LOG = Path.of("target/spans/scheduler.jsonl");

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    TestKafka kafka;
    String model;
    String tenant;
    String nodeId;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        kafka = new TestKafka();
        String run = UUID.randomUUID().toString().substring(0, 8);
        model = "TRACE-" + run;
        tenant = "t-" + run;
        nodeId = "node-" + model;
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        kafka.close();
    }

    private void hostJoins() {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, new HostInventory(nodeId, nodeId + ".test",
                "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND, 21_960_000, 96_000, 1_000_000, "a", List.of(),
                devices, List.of(), "simulated", Instant.now()), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
    }

    private JobSpec spec() {
        return JobSpec.newBuilder().setName("traced").setWorkers(1).setGpusPerWorker(2).addGpuModels(model)
                .addCommand("sleep").addCommand("5").build();
    }

    /** Submits over gRPC, the call carrying {@code traceparent} as its metadata does from an instrumented client. */
    private String submit(String traceparent) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(Traceparent.HEADER, Metadata.ASCII_STRING_MARSHALLER), traceparent);
        return JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                .submitJob(SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId(UUID.randomUUID()
                        .toString()).setSpec(spec()).build()).getJob().getJobId();
    }

    private static String traceparentOf(ConsumerRecord<String, byte[]> record) {
        return TopicTail.header(record, Traceparent.HEADER);
    }

    private static JobTrace traceOf(String jobId) {
        return JobTrace.of(LoggedSpan.read(SPAN_LOG).spans(), jobId);
    }

    @Test
    void the_start_command_and_job_events_continue_the_trace_of_the_submit_call() {
        hostJoins();
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        var events = kafka.tail(Topics.JOB_EVENTS.name());
        String caller = "4bf92f3577b34da6a3ce929d0e0e4736";
        String id = submit("00-" + caller + "-00f067aa0ba902b7-01");

        ConsumerRecord<String, byte[]> start = commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(20))
                .get(0);
        assertThat(Traceparent.traceId(traceparentOf(start))).isEqualTo(caller);
        List<ConsumerRecord<String, byte[]>> jobEvents = events.next(r -> r.key().equals(id), 2, Duration.ofSeconds(20));
        assertThat(jobEvents).allSatisfy(r -> assertThat(Traceparent.traceId(traceparentOf(r))).isEqualTo(caller));

        // the span log: SubmitJob (the caller's child) -> accept job -> place job -> node.commands publish, whose
        // span is the one the record names as its parent
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            JobTrace trace = traceOf(id);
            assertThat(trace.traceIds()).containsExactly(caller);
            LoggedSpan accept = named(trace, "accept job");
            LoggedSpan place = named(trace, "place job");
            LoggedSpan publish = trace.spans().stream().filter(s -> s.name().equals("node.commands publish")
                    && nodeId.equals(s.attribute("node_id"))).findFirst().orElseThrow();
            assertThat(named(trace, "gpucloud.v1.JobService/SubmitJob").spanId()).isEqualTo(accept.parentSpanId());
            assertThat(accept.attribute("job_id")).isEqualTo(id);
            assertThat(accept.attribute("tenant")).isEqualTo(tenant);
            assertThat(place.parentSpanId()).isEqualTo(accept.spanId());
            assertThat(place.attribute("node_id")).isEqualTo(nodeId);
            assertThat(publish.parentSpanId()).isEqualTo(place.spanId());
            assertThat(traceparentOf(start)).contains(publish.spanId());
        });
    }

    @Test
    void a_job_request_record_continues_the_trace_its_header_names() {
        hostJoins();
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        String producer = "0af7651916cd43dd8448eb211c80319c";
        JobRequest request = new JobRequest(tenant, "req-" + UUID.randomUUID(), new dev.gpucloud.contracts.events.JobSpec(
                "traced", 1, 2, null, 0, 1_000, 1_024, List.of(model), 0, Interconnect.NONE, CapacityPreference.ON_DEMAND,
                PriorityClass.NORMAL, null, 600, null, 0, List.of("sleep", "5"), Map.of(), Map.of()));
        ProducerRecord<String, byte[]> record = EventRecords.record(Topics.JOB_REQUESTS, tenant, request, "test");
        record.headers().add(Traceparent.HEADER, ("00-" + producer + "-b7ad6b7169203331-01")
                .getBytes(StandardCharsets.UTF_8));
        kafka.send(record);

        ConsumerRecord<String, byte[]> start = commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(30))
                .get(0);
        assertThat(Traceparent.traceId(traceparentOf(start))).isEqualTo(producer);
    }

    @Test
    void a_malformed_traceparent_starts_a_new_trace_and_the_job_runs_as_ever() {
        hostJoins();
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        String id = submit("00-not-a-trace-context");

        ConsumerRecord<String, byte[]> start = commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(20))
                .get(0);
        String trace = Traceparent.traceId(traceparentOf(start));
        assertThat(trace).isNotNull().hasSize(32);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(traceOf(id).traceIds()).containsExactly(trace));
    }

    private static LoggedSpan named(JobTrace trace, String name) {
        return trace.spans().stream().filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no span '" + name + "' in\n" + trace.render()));
    }
}
