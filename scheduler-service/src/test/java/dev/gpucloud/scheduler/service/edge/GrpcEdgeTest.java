package dev.gpucloud.scheduler.service.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.grpc.v1.CheckpointPolicy;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.util.Base64;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inputs of issue #19, each refused naming the field before anything is stored; a canary still places. */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
class GrpcEdgeTest {

    @TestHTTPResource("/")
    URL url;

    GrpcSession session;
    ManagedChannel channel;
    JobServiceGrpc.JobServiceBlockingStub jobs;
    String tenant;

    @BeforeEach
    void connect() {
        session = new GrpcSession(url, "t-edge-");
        channel = session.channel;
        jobs = session.jobs();
        tenant = session.tenant;
    }

    @AfterEach
    void close() throws InterruptedException {
        session.close();
    }

    private SubmitJobRequest.Builder request(UnaryOperator<JobSpec.Builder> change) {
        JobSpec.Builder spec = JobSpec.newBuilder().setName("edge").setWorkers(1).setMilliGpu(250)
                .addGpuModels("NO-SUCH-GPU").addCommand("sleep").addCommand("1");
        return SubmitJobRequest.newBuilder().setTenant(tenant).setClientRequestId(UUID.randomUUID().toString())
                .setSpec(change.apply(spec));
    }

    private void refused(SubmitJobRequest request, String field) {
        assertThatThrownBy(() -> jobs.submitJob(request)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains(field);
        });
    }

    @Test
    void a_900_kb_checkpoint_location_is_refused_naming_the_field_and_nothing_is_stored() {
        String location = "s3://bucket/" + "x".repeat(900_000);
        refused(request(s -> s.setCheckpoint(CheckpointPolicy.newBuilder().setIntervalSeconds(60)
                .setLocation(location))).build(), "field 'spec.checkpoint.location' must be at most 2048 characters");

        assertThat(jobs.listJobs(ListJobsRequest.newBuilder().setTenant(tenant).build()).getJobsCount()).isZero();
        GrpcEdge.canaryIsPlaced(channel, session.kafka, tenant);
    }

    @Test
    void times_out_of_range_name_the_field() {
        refused(request(s -> s.setDeadline(Timestamp.newBuilder().setSeconds(Long.MAX_VALUE))).build(),
                "field 'spec.deadline' has seconds");
        refused(request(s -> s.setDeadline(Timestamp.newBuilder().setSeconds(2_000_000_000L).setNanos(-5))).build(),
                "field 'spec.deadline' has nanos -5");
        refused(request(s -> s.setDeadline(Timestamp.newBuilder().setSeconds(1))).build(), "field 'spec.deadline'");
    }

    @Test
    void nul_bytes_and_empty_programs_are_refused_before_the_database() {
        refused(request(s -> s).setClientRequestId("r-\u0000-1").build(), "client_request_id");
        refused(request(s -> s.setName("a\u0000b")).build(), "spec.name");
        refused(request(s -> s.clearCommand().addCommand("")).build(), "spec.command[0]");
        assertThatThrownBy(() -> jobs.getJob(GetJobRequest.newBuilder().setJobId("job-\u0000").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("job_id").contains("NUL");
                });
    }

    @Test
    void malformed_protobuf_and_invalid_utf8_are_invalid_argument() {
        var submit = GrpcEdge.raw("gpucloud.v1.JobService/SubmitJob", MethodType.UNARY);
        Status garbage = GrpcEdge.call(channel, submit, new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01});
        assertThat(garbage.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(garbage.getDescription()).contains("gpucloud.v1.JobService/SubmitJob");

        // field 1 (tenant), length 2: 0xC3 0x28 is not UTF-8
        Status utf8 = GrpcEdge.call(channel, submit, new byte[] {0x0a, 0x02, (byte) 0xc3, 0x28});
        assertThat(utf8.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);

        var nodes = GrpcEdge.raw("gpucloud.v1.ClusterService/ListNodes", MethodType.UNARY);
        assertThat(GrpcEdge.call(channel, nodes, new byte[] {0x0a, 0x05, 0x01}).getCode())
                .isEqualTo(Status.Code.INVALID_ARGUMENT);
    }

    @Test
    void a_forged_page_token_is_not_ours() {
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(
                "1700000000.0:job-00000000".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThatThrownBy(() -> jobs.listJobs(ListJobsRequest.newBuilder().setPageToken(forged).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("field 'page_token' is not a token this service issued");
                });
    }
}
