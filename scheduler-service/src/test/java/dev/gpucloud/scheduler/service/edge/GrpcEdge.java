package dev.gpucloud.scheduler.service.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** What the edge tests share: raw calls with any bytes, the codes a client may get, and the canary job. */
final class GrpcEdge {

    /** Every code a client's input may earn; anything else (INTERNAL, UNKNOWN, a timeout) is the server's fault. */
    static final Set<Status.Code> CLIENT_CODES = EnumSet.of(Status.Code.OK, Status.Code.INVALID_ARGUMENT,
            Status.Code.NOT_FOUND, Status.Code.FAILED_PRECONDITION, Status.Code.ALREADY_EXISTS,
            Status.Code.RESOURCE_EXHAUSTED, Status.Code.PERMISSION_DENIED);

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private GrpcEdge() {
    }

    /** A method taking and returning raw bytes, under a real method's name. */
    static MethodDescriptor<byte[], byte[]> raw(String fullName, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setFullMethodName(fullName).setType(type)
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    /** Sends these bytes to the method; the status it ends with. */
    static Status call(ManagedChannel channel, MethodDescriptor<byte[], byte[]> method, byte[] request) {
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(15, TimeUnit.SECONDS);
        try {
            if (method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
                var it = ClientCalls.blockingServerStreamingCall(channel, method, options, request);
                it.hasNext(); // the first answer (or the error) is enough
                return Status.OK;
            }
            ClientCalls.blockingUnaryCall(channel, method, options, request);
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    /** A host of its own GPU model, so only the canary lands there. */
    static HostInventory host(String nodeId, String model) {
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        return new HostInventory(nodeId, nodeId + ".test", "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND,
                21_960_000, 96_000, 1_000_000, "a", List.of(), devices, List.of(), "simulated", Instant.now());
    }

    /** Submits a one-GPU job on a fresh host of its own model and waits until it is placed. */
    static void canaryIsPlaced(ManagedChannel channel, TestKafka kafka, String tenant) {
        String model = "CANARY-" + UUID.randomUUID().toString().substring(0, 8);
        String nodeId = "node-" + model;
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, host(nodeId, model), "test"));
        var cluster = ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.listNodes(ListNodesRequest.newBuilder()
                .setGpuModel(model).build()).getNodesCount() == 1);
        var jobs = JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        String id = jobs.submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId("canary-" + model).setSpec(JobSpec.newBuilder().setName("canary").setWorkers(1)
                        .setGpusPerWorker(1).addGpuModels(model).addCommand("sleep").addCommand("1")).build())
                .getJob().getJobId();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(jobs.getJob(GetJobRequest.newBuilder()
                .setJobId(id).build()).getState()).isIn(JobState.SCHEDULED, JobState.RUNNING));
    }
}
