package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every unary call has a deadline, and the errors a person meets say what to do. The server here never answers
 * GetJob, and refuses ListJobs as a scheduler refuses a call without a token.
 */
class RpcDeadlineTest {

    static Server server;

    @BeforeAll
    static void start() throws Exception {
        server = ServerBuilder.forPort(0).addService(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void getJob(GetJobRequest request, StreamObserver<Job> response) {
                // never answers
            }

            @Override
            public void submitJob(dev.gpucloud.contracts.grpc.v1.SubmitJobRequest request,
                    StreamObserver<dev.gpucloud.contracts.grpc.v1.SubmitJobResponse> response) {
                // never answers either
            }

            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                response.onError(Status.UNAUTHENTICATED.withDescription("no bearer token").asRuntimeException());
            }
        }).build().start();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    static GpucloudCliTest.Result cli(String... args) {
        return GpucloudCliTest.cliAt("localhost:" + server.getPort(), args);
    }

    @Test
    void a_call_that_gets_no_answer_names_the_call_its_deadline_and_the_flag_to_wait_longer() {
        GpucloudCliTest.Result r = cli("--request-timeout", "300ms", "get", "j-1");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "the scheduler at localhost:" + server.getPort() + " did not answer in"
                + " time: GetJob got no answer within 300ms", "--request-timeout (env GPUCLOUD_REQUEST_TIMEOUT)");
    }

    @Test
    void a_submit_that_gets_no_answer_names_the_request_id_that_finds_it_again_without_a_second_job() {
        GpucloudCliTest.Result r = cli("--request-timeout", "300ms", "submit", "--tenant", "acme", "--request-id",
                "run-7", "--", "sleep", "1");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "SubmitJob got no answer within 300ms (it may still be accepted:"
                + " submitting again with the same --request-id never makes a second job); --request-id run-7");
    }

    @Test
    void unauthenticated_says_to_log_in_with_which_profile() {
        GpucloudCliTest.Result r = cli("--profile", "acme", "jobs");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "UNAUTHENTICATED: no bearer token; log in with gpucloud login (profile"
                + " acme)");
    }

    @Test
    void a_bad_request_timeout_is_one_line() {
        for (String bad : new String[] {"0", "0s", "soon", "-1s", "2h", "1.5.5"}) {
            GpucloudCliTest.Result r = cli("--request-timeout", bad, "jobs");
            assertThat(r.code()).as(bad).isEqualTo(2);
            GpucloudCliTest.assertOneLineError(r, "--request-timeout: must be a duration more than 0 and at most 1h");
        }
    }

    @Test
    void durations_read_as_people_write_them() {
        assertThat(RpcDeadline.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(RpcDeadline.parse("15")).isEqualTo(Duration.ofSeconds(15));
        assertThat(RpcDeadline.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(RpcDeadline.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(RpcDeadline.parse(RpcDeadline.DEFAULT)).isEqualTo(Duration.ofSeconds(15));
        assertThat(RpcDeadline.words(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThatThrownBy(() -> RpcDeadline.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
