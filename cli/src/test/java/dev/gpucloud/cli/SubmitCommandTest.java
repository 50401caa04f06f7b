package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code submit} of arrays, dependencies and DAG files against a real gRPC server that is idempotent on the request
 * id, as the scheduler is: a repeat gets the first answer, marked duplicate.
 */
class SubmitCommandTest {

    @TempDir
    Path dir;
    final List<SubmitJobRequest> sent = new CopyOnWriteArrayList<>();
    final Map<String, SubmitJobResponse> seen = new HashMap<>();
    volatile String refuse;
    Server server;

    @BeforeEach
    void start() throws Exception {
        server = ServerBuilder.forPort(0).addService(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public synchronized void submitJob(SubmitJobRequest request, StreamObserver<SubmitJobResponse> response) {
                if (request.getSpec().getName().equals(refuse)) {
                    response.onError(Status.INVALID_ARGUMENT.withDescription("spec.after[0].job_id: no job x")
                            .asRuntimeException());
                    return;
                }
                SubmitJobResponse first = seen.get(request.getClientRequestId());
                if (first != null) {
                    response.onNext(first.toBuilder().setDuplicate(true).build());
                    response.onCompleted();
                    return;
                }
                sent.add(request);
                String n = String.format("%012x", sent.size());
                SubmitJobResponse.Builder r = SubmitJobResponse.newBuilder();
                JobState state = request.getSpec().getAfterCount() > 0 ? JobState.WAITING_FOR_DEPENDENCIES
                        : JobState.PENDING;
                if (request.hasArray()) {
                    r.setArrayId("arr-" + n).setArrayCount(request.getArray().getCount())
                            .setJob(Job.newBuilder().setJobId("arr-" + n + "-0").setArrayId("arr-" + n).setState(state));
                } else {
                    r.setJob(Job.newBuilder().setJobId("job-" + n).setState(state));
                }
                seen.put(request.getClientRequestId(), r.build());
                response.onNext(r.build());
                response.onCompleted();
            }
        }).build().start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    GpucloudCliTest.Result cli(String... args) {
        return GpucloudCliTest.cliAt("localhost:" + server.getPort(), args);
    }

    Path write(String text) throws Exception {
        Path file = dir.resolve("dag.yaml");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void array_flags_make_a_grid_and_after_flags_dependencies() {
        GpucloudCliTest.Result r = cli("submit", "--array-param", "LR=1e-3,1e-4", "--array-param", "BATCH=32,64,128",
                "--after", "job-abc", "--after", "arr-0123456789ab:any", "--", "python", "train.py");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("arr-000000000001 (6 elements)  WAITING_FOR_DEPENDENCIES  \n");
        SubmitJobRequest request = sent.get(0);
        assertThat(request.getArray().getCount()).isEqualTo(6);
        assertThat(request.getArray().getParameters(1).getValuesList()).containsExactly("32", "64", "128");
        assertThat(request.getSpec().getAfterList()).extracting(d -> d.getJobId() + " " + d.getOn())
                .containsExactly("job-abc AFTER_SUCCESS", "arr-0123456789ab AFTER_ANY");
        assertThat(cli("submit", "--array", "16", "--", "sleep", "1").out()).startsWith("arr-000000000002 (16 elements)");
        assertThat(sent.get(1).getArray().getParametersList()).isEmpty();
    }

    @Test
    void a_bad_array_or_after_flag_is_one_line_and_sends_nothing() {
        GpucloudCliTest.assertOneLineError(cli("submit", "--array", "0", "--", "x"), "--array: count is 0");
        GpucloudCliTest.assertOneLineError(cli("submit", "--array", "3", "--array-param", "A=1,2", "--", "x"),
                "count is 3 but the grid has 2 combinations");
        GpucloudCliTest.assertOneLineError(cli("submit", "--array-param", "LR", "--", "x"), "NAME=VALUE,VALUE");
        GpucloudCliTest.assertOneLineError(cli("submit", "--array-param", "1X=a", "--", "x"), "'1X' is not a variable");
        GpucloudCliTest.assertOneLineError(cli("submit", "--array-param", "LR=", "--", "x"), "LR has no values");
        GpucloudCliTest.assertOneLineError(cli("submit", "--after", "job-1:later", "--", "x"),
                "--after job-1:later: 'later' is not one of success, any");
        assertThat(sent).isEmpty();
    }

    static final String DAG = """
            request_id: nightly
            jobs:
              - name: train
                after: [prepare]
                array: {count: 4}
                command: [python, train.py]
              - name: prepare
                command: [python, prepare.py]
              - name: report
                after: [{job: train, on: any}]
                command: [python, report.py]
            """;

    @Test
    void a_dag_file_is_submitted_in_order_a_line_a_job_and_again_without_duplicates() throws Exception {
        Path file = write(DAG);
        GpucloudCliTest.Result r = cli("submit", "-f", file.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("""
                job-000000000001  prepare  PENDING
                arr-000000000002  train  WAITING_FOR_DEPENDENCIES  4 elements
                job-000000000003  report  WAITING_FOR_DEPENDENCIES
                """);
        assertThat(sent.get(2).getSpec().getAfter(0).getJobId()).isEqualTo("arr-000000000002");
        GpucloudCliTest.Result again = cli("submit", "-f", file.toString());
        assertThat(again.out()).contains("job-000000000001  prepare  PENDING  (already submitted)");
        assertThat(sent).hasSize(3);
    }

    @Test
    void a_stop_part_way_says_how_to_go_on_and_the_rerun_sends_only_the_rest() throws Exception {
        Path file = write(DAG.replace("request_id: nightly\n", ""));
        refuse = "report";
        GpucloudCliTest.Result r = cli("submit", "-f", file.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("request id dag-", "INVALID_ARGUMENT: spec.after[0].job_id: no job x",
                "submitting 'report', after 2 of 3 were accepted", "--request-id dag-");
        String id = r.err().replaceAll("(?s).*--request-id (dag-[0-9a-f-]+).*", "$1");
        refuse = null;
        GpucloudCliTest.Result rerun = cli("submit", "-f", file.toString(), "--request-id", id);
        assertThat(rerun.code()).as(rerun.err()).isZero();
        assertThat(rerun.out()).contains("prepare  PENDING  (already submitted)", "job-000000000003  report");
        assertThat(sent).hasSize(3);
    }

    @Test
    void json_output_is_a_list_of_what_was_submitted() throws Exception {
        GpucloudCliTest.Result r = cli("submit", "-f", write(DAG).toString(), "-o", "json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode list = new ObjectMapper().readTree(r.out());
        assertThat(list).hasSize(3);
        assertThat(list.get(1).get("name").asText()).isEqualTo("train");
        assertThat(list.get(1).get("id").asText()).isEqualTo("arr-000000000002");
        assertThat(list.get(1).get("arrayCount").asInt()).isEqualTo(4);
        assertThat(list.get(1).get("requestId").asText()).isEqualTo("nightly/train");
        assertThat(list.get(2).get("state").asText()).isEqualTo("WAITING_FOR_DEPENDENCIES");
        GpucloudCliTest.Result one = cli("submit", "-o", "yaml", "--", "sleep", "1");
        assertThat(one.out()).contains("- name: sleep", "id: job-000000000004");
    }

    @Test
    void a_cycle_in_a_dag_file_sends_nothing() throws Exception {
        Path file = write(DAG.replace("command: [python, prepare.py]", "after: [report]\n    command: [x]"));
        GpucloudCliTest.Result r = cli("submit", "-f", file.toString());
        GpucloudCliTest.assertOneLineError(r, "line 11, column 13", "a cycle, train -> prepare -> report -> train");
        assertThat(sent).isEmpty();
    }
}
