package dev.gpucloud.scheduler.service.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.GetCapacityRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.testsupport.Hostile;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.RawRecords;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Generated hostile input for every gRPC method and for job.requests, from the limits table: seeded
 * ({@code -Dgpucloud.fuzz.seed}, default 19) and bounded ({@code -Dgpucloud.fuzz.count} per entry point,
 * default 120). No input may earn a status that blames the server (INTERNAL, UNKNOWN, a timeout), and
 * afterwards a canary job is still placed. Prints the outcomes per entry point.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class GrpcFuzzTest {

    private static final long SEED = Long.getLong("gpucloud.fuzz.seed", 19);
    private static final int COUNT = Integer.getInteger("gpucloud.fuzz.count", 120);

    @TestHTTPResource("/")
    URL url;

    GrpcSession session;
    ManagedChannel channel;
    TestKafka kafka;
    String tenant;
    Hostile hostile;

    @BeforeEach
    void connect() {
        session = new GrpcSession(url, "t-fuzz-");
        channel = session.channel;
        kafka = session.kafka;
        tenant = session.tenant;
        hostile = new Hostile(SEED);
    }

    @AfterEach
    void close() throws InterruptedException {
        session.close();
    }

    @Test
    void no_generated_input_blames_the_server_and_a_canary_still_places() {
        Map<String, Map<String, Integer>> outcomes = new TreeMap<>();
        List<String> accepted = new ArrayList<>();
        fuzz(outcomes, "JobService/SubmitJob", MethodType.UNARY, this::submitJob, response -> {
            try {
                accepted.add(SubmitJobResponse.parseFrom(response).getJob().getJobId());
            } catch (InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
        });
        fuzz(outcomes, "JobService/GetJob", MethodType.UNARY,
                () -> GetJobRequest.newBuilder().setJobId(hostile.text(Limits.ID)).build(), null);
        fuzz(outcomes, "JobService/CancelJob", MethodType.UNARY, () -> CancelJobRequest.newBuilder()
                .setJobId(hostile.text(Limits.ID)).setReason(hostile.text(Limits.DETAIL)).build(), null);
        fuzz(outcomes, "JobService/WatchJob", MethodType.SERVER_STREAMING,
                () -> WatchJobRequest.newBuilder().setJobId(hostile.text(Limits.ID)).build(), null);
        fuzz(outcomes, "JobService/StreamLogs", MethodType.SERVER_STREAMING, this::streamLogs, null);
        fuzz(outcomes, "JobService/ListJobs", MethodType.UNARY, this::listJobs, null);
        fuzz(outcomes, "ClusterService/ListNodes", MethodType.UNARY,
                () -> ListNodesRequest.newBuilder().setGpuModel(hostile.text(Limits.GPU_MODEL)).build(), null);
        fuzz(outcomes, "ClusterService/GetCapacity", MethodType.UNARY, GetCapacityRequest::getDefaultInstance, null);
        // what was accepted is cancelled, so it does not wait in the queue of later tests
        var jobs = session.jobs();
        accepted.forEach(id -> jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(id).setReason("fuzz").build()));

        outcomes.forEach((method, codes) -> System.out.printf("fuzz gRPC %s: %d inputs %s%n", method,
                codes.values().stream().mapToInt(Integer::intValue).sum(), codes));
        outcomes.forEach((method, codes) -> assertThat(codes.keySet()).as(method)
                .allMatch(code -> GrpcEdge.CLIENT_CODES.contains(Status.Code.valueOf(code))));
        GrpcEdge.canaryIsPlaced(channel, kafka, tenant);
    }

    /** A StreamLogs of a hostile job id, rank, stream and start. */
    private dev.gpucloud.contracts.grpc.v1.StreamLogsRequest streamLogs() {
        var request = dev.gpucloud.contracts.grpc.v1.StreamLogsRequest.newBuilder().setJobId(hostile.text(Limits.ID));
        if (hostile.nextBoolean()) {
            request.setRank(hostile.nextBoolean() ? hostile.nextInt(2048) : -1 - hostile.nextInt(1000));
        }
        if (hostile.nextBoolean()) {
            request.setStreamValue(hostile.nextInt(6) - 1);
        }
        if (hostile.nextBoolean()) {
            request.setSince(com.google.protobuf.Timestamp.newBuilder()
                    .setSeconds(hostile.nextBoolean() ? Long.MAX_VALUE - hostile.nextInt(10) : hostile.nextInt(2_000_000_000))
                    .setNanos(hostile.nextBoolean() ? -1 : hostile.nextInt(1_000_000_000)));
        }
        return request.build();
    }

    @Test
    void hostile_job_requests_are_dead_lettered_and_a_canary_request_is_still_accepted() {
        String template = new String(EventRecords.record(Topics.JOB_REQUESTS, tenant,
                new dev.gpucloud.contracts.events.JobRequest(tenant, "fuzz-template", validSpecRecord()), "fuzz")
                .value(), StandardCharsets.UTF_8);
        String[] fields = {"clientRequestId", "name", "workers", "milliGpu", "command", "env", "deadline", "tenant",
            "checkpoint", "gpuModels", "priceCeilingMicrosPerHour", "runtimeEstimateSeconds"};
        for (int i = 0; i < COUNT; i++) {
            String json = template;
            String field = fields[hostile.nextInt(fields.length)];
            String value = switch (hostile.nextInt(5)) {
                case 0 -> String.valueOf(hostile.number(Limits.WORKERS));
                case 1 -> "1.5";
                case 2 -> "[\"\"]";
                case 3 -> "\"1970-01-01T00:00:00Z\"";
                default -> com.fasterxml.jackson.databind.node.TextNode.valueOf(hostile.text(Limits.CHECKPOINT_LOCATION))
                        .toString();
            };
            json = json.replaceFirst("\"" + field + "\":(\"[^\"]*\"|[^,}]*)", "\"" + field + "\":"
                    + java.util.regex.Matcher.quoteReplacement(value));
            var record = EventRecords.record(Topics.JOB_REQUESTS, tenant,
                    new dev.gpucloud.contracts.events.JobRequest(tenant, "x", validSpecRecord()), "fuzz");
            kafka.send(hostile.nextInt(4) == 0
                    ? RawRecords.withValue(record, hostile.mutate(json.getBytes(StandardCharsets.UTF_8)))
                    : RawRecords.withValue(record, json));
        }
        System.out.printf("fuzz topic job.requests: %d records sent%n", COUNT);
        var canary = new dev.gpucloud.contracts.events.JobRequest(tenant, "canary-after-fuzz", validSpecRecord());
        kafka.send(EventRecords.record(Topics.JOB_REQUESTS, tenant, canary, "fuzz"));
        var jobs = session.jobs();
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant)
                .setPageSize(500).build()).getJobsList().stream()
                .anyMatch(j -> j.getClientRequestId().equals("canary-after-fuzz")));
        jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).setPageSize(500).build()).getJobsList()
                .forEach(j -> jobs.cancelJob(CancelJobRequest.newBuilder().setJobId(j.getJobId()).build()));
    }

    private static dev.gpucloud.contracts.events.JobSpec validSpecRecord() {
        return new dev.gpucloud.contracts.events.JobSpec("fuzz", 1, 0, null, 250, 0, 0, List.of("NO-SUCH-GPU"), 0,
                null, null, null, null, 0, null, 0, List.of("sleep", "1"), Map.of());
    }

    private JobSpec.Builder validSpec() {
        return JobSpec.newBuilder().setName("fuzz").setWorkers(1).setMilliGpu(250).addGpuModels("NO-SUCH-GPU")
                .addCommand("sleep").addCommand("1");
    }

    private Message submitJob() {
        JobSpec.Builder spec = validSpec();
        SubmitJobRequest.Builder request = SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString());
        for (int changes = 1 + hostile.nextInt(3); changes > 0; changes--) {
            switch (hostile.nextInt(16)) {
                case 0 -> request.setTenant(hostile.text(Limits.TENANT));
                case 1 -> request.setClientRequestId(hostile.text(Limits.ID));
                case 2 -> spec.setName(hostile.text(Limits.JOB_NAME));
                case 3 -> spec.setWorkers((int) hostile.number(Limits.WORKERS));
                case 4 -> spec.setGpusPerWorker((int) hostile.number(Limits.GPUS_PER_WORKER)).setMilliGpu(0);
                case 5 -> spec.setMigProfile(hostile.text(Limits.MIG_PROFILE)).setMilliGpu(0);
                case 6 -> spec.setMilliGpu((int) hostile.number(Limits.MILLI_GPU));
                case 7 -> spec.setMemoryMibPerWorker(hostile.number(Limits.MEMORY_MIB));
                case 8 -> spec.addGpuModels(hostile.text(Limits.GPU_MODEL));
                case 9 -> spec.setCheckpoint(CheckpointPolicy.newBuilder()
                        .setIntervalSeconds((int) hostile.number(Limits.CHECKPOINT_INTERVAL))
                        .setLocation(hostile.text(Limits.CHECKPOINT_LOCATION)));
                case 10 -> spec.setDeadline(Timestamp.newBuilder().setSeconds(hostile.number(Limits.EVENT_TIME))
                        .setNanos((int) hostile.number(Limits.WORKERS)));
                case 11 -> spec.addCommand(hostile.text(Limits.COMMAND_ARG));
                case 12 -> spec.clearCommand().addCommand(hostile.text(Limits.COMMAND_ARG));
                case 13 -> spec.putEnv(hostile.text(Limits.ENV_NAME), hostile.text(Limits.ENV_VALUE));
                case 14 -> spec.setPriceCeilingMicrosPerHour(hostile.number(Limits.PRICE_CEILING))
                        .setRuntimeEstimateSeconds(hostile.number(Limits.RUNTIME_ESTIMATE))
                        .setTimeLimitSeconds(hostile.number(Limits.TIME_LIMIT));
                default -> spec.setInterconnectValue(hostile.nextInt(6)).setCapacityValue(hostile.nextInt(6))
                        .setPriorityValue(hostile.nextInt(6));
            }
        }
        return request.setSpec(spec).build();
    }

    private Message listJobs() {
        ListJobsRequest.Builder request = ListJobsRequest.newBuilder();
        switch (hostile.nextInt(4)) {
            case 0 -> request.setTenant(hostile.text(Limits.TENANT));
            case 1 -> request.setPageSize((int) hostile.number(Limits.PAGE_SIZE));
            case 2 -> request.setPageToken(hostile.text(Limits.PAGE_TOKEN));
            default -> request.addStatesValue(hostile.nextInt(12) - 2);
        }
        return request.build();
    }

    /**
     * Sends {@code COUNT} inputs to one method: three in four generated field by field, one in four the bytes
     * of a generated request mutated (cut, extended, flipped), all as raw bytes so the server parses them.
     */
    private void fuzz(Map<String, Map<String, Integer>> outcomes, String method, MethodType type,
            Supplier<Message> generate, java.util.function.Consumer<byte[]> onOk) {
        var descriptor = GrpcEdge.raw("gpucloud.v1." + method, type);
        Map<String, Integer> codes = outcomes.computeIfAbsent(method, ignored -> new TreeMap<>());
        for (int i = 0; i < COUNT; i++) {
            byte[] request = generate.get().toByteArray();
            boolean mutated = hostile.nextInt(4) == 0;
            if (mutated) {
                request = hostile.mutate(request);
            }
            Status status;
            CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(type == MethodType.UNARY ? 20 : 3,
                    TimeUnit.SECONDS);
            try {
                if (type == MethodType.SERVER_STREAMING) {
                    ClientCalls.blockingServerStreamingCall(channel, descriptor, options, request).hasNext();
                } else {
                    byte[] response = ClientCalls.blockingUnaryCall(channel, descriptor, options, request);
                    if (onOk != null) {
                        onOk.accept(response);
                    }
                }
                status = Status.OK;
            } catch (StatusRuntimeException e) {
                status = e.getStatus();
                if (!GrpcEdge.CLIENT_CODES.contains(status.getCode())) {
                    System.out.printf("fuzz gRPC %s: input %d (seed %d) earned %s: %s%n", method, i, SEED,
                            status.getCode(), status.getDescription());
                }
            }
            codes.merge(status.getCode().name(), 1, Integer::sum);
        }
    }
}
