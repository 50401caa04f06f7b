package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.contracts.grpc.v1.Dependency;
import dev.gpucloud.contracts.grpc.v1.DependencyCondition;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code jobs --array} and {@code get} of an element, against a real gRPC server holding one array of 16. */
class JobsArrayCommandTest {

    static final String ARRAY = "arr-0123456789ab";
    static final List<Job> ELEMENTS = new ArrayList<>();
    static final List<ListJobsRequest> asked = new CopyOnWriteArrayList<>();
    static Server server;

    static {
        JobState[] states = new JobState[16];
        java.util.Arrays.fill(states, JobState.PENDING);
        states[0] = states[1] = states[2] = JobState.RUNNING;
        states[3] = states[4] = JobState.SUCCEEDED;
        states[5] = JobState.FAILED;
        for (int i = 0; i < 16; i++) {
            ELEMENTS.add(Job.newBuilder().setJobId(ARRAY + "-" + i).setTenant("acme").setArrayId(ARRAY).setArrayIndex(i)
                    .setState(states[i]).setSpec(JobSpec.newBuilder().setName("sweep").setWorkers(1).setGpusPerWorker(1)
                            .addAfter(Dependency.newBuilder().setJobId("job-prep").setOn(DependencyCondition.AFTER_ANY)))
                    .build());
        }
    }

    @BeforeAll
    static void start() throws Exception {
        server = ServerBuilder.forPort(0).addService(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                asked.add(request);
                // five a page, so the CLI must follow the tokens
                int from = request.getPageToken().isEmpty() ? 0 : Integer.parseInt(request.getPageToken());
                List<Job> of = request.getArrayId().equals(ARRAY) ? ELEMENTS : List.of();
                int to = Math.min(of.size(), from + Math.min(5, request.getPageSize()));
                response.onNext(ListJobsResponse.newBuilder().addAllJobs(of.subList(from, to))
                        .setNextPageToken(to < of.size() ? String.valueOf(to) : "").build());
                response.onCompleted();
            }

            @Override
            public void getJob(GetJobRequest request, StreamObserver<Job> response) {
                response.onNext(ELEMENTS.get(7).toBuilder().setState(JobState.WAITING_FOR_DEPENDENCIES).build());
                response.onCompleted();
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
    void an_array_is_counted_by_state_then_listed_by_index_over_every_page() {
        GpucloudCliTest.Result r = cli("jobs", "--array", ARRAY);
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).isEqualTo(ARRAY + ": 16 elements: 3 RUNNING, 10 PENDING, 2 SUCCEEDED, 1 FAILED");
        assertThat(lines.get(1)).startsWith("INDEX   JOB").contains("STATE");
        assertThat(lines).hasSize(18);
        assertThat(lines.get(17)).startsWith("15      " + ARRAY + "-15").contains("PENDING");
        assertThat(asked).allSatisfy(q -> assertThat(q.getArrayId()).isEqualTo(ARRAY));
    }

    @Test
    void scripts_get_the_elements_without_the_summary_or_with_it_as_a_field() throws Exception {
        GpucloudCliTest.Result bare = cli("jobs", "--array", ARRAY, "--no-headers", "--limit", "4");
        assertThat(bare.out().lines().toList()).hasSize(4).first().asString().startsWith("0 ");
        JsonNode json = new ObjectMapper().readTree(cli("jobs", "--array", ARRAY, "-o", "json").out());
        assertThat(json.get("array").get("elements").asInt()).isEqualTo(16);
        assertThat(json.get("array").get("states").get("RUNNING").asInt()).isEqualTo(3);
        assertThat(json.get("jobs")).hasSize(16);
        assertThat(json.get("jobs").get(3).get("arrayIndex").asInt()).isEqualTo(3);
        assertThat(cli("jobs", "--array", ARRAY, "-o", "yaml").out()).contains("arrayId: " + ARRAY);
        assertThat(cli("jobs", "--array", ARRAY, "-o", "wide").out()).contains("ASKS", "1 worker x 1 GPU");
    }

    @Test
    void an_id_that_is_no_arrays_is_refused_before_asking() {
        GpucloudCliTest.assertOneLineError(cli("jobs", "--array", "job-1"), "--array takes an array's id (arr-...)");
    }

    @Test
    void get_shows_the_array_and_index_the_dependencies_and_the_waiting_state() {
        GpucloudCliTest.Result r = cli("get", ARRAY + "-7");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("state        WAITING_FOR_DEPENDENCIES\n", "array        " + ARRAY + "[7]\n",
                "after        job-prep (any end)\n");
    }
}
