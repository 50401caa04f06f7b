package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.grpc.v1.DependencyCondition;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DAG files: the graph is checked (names, cycles) before anything is sent, then sent in order with real ids. */
class JobFileDagTest {

    @TempDir
    Path dir;

    static final String PIPELINE = """
            request_id: nightly-7
            jobs:
              - name: evaluate
                after: [{job: train, on: success}, {job: job-ext1, on: any}]
                command: [python, eval.py]
              - name: prepare
                command: [python, prepare.py]
              - name: train
                after: [prepare]
                array: {grid: {LR: [1e-3, 1e-4]}}
                command: [python, train.py]
            """;

    List<DagFile.Node> order(String text) throws Exception {
        Path file = dir.resolve("dag.yaml");
        Files.writeString(file, text);
        return DagFile.order("dag.yaml", JobFile.read(file));
    }

    /** A scheduler that answers each request with the next id (an array's for an array), recording them. */
    static final class Scheduler implements DagSubmission.Sender {
        final List<SubmitJobRequest> sent = new ArrayList<>();
        String refuse;

        @Override
        public SubmitJobResponse send(SubmitJobRequest request) {
            if (request.getSpec().getName().equals(refuse)) {
                throw Status.FAILED_PRECONDITION.withDescription("spec.after[0].job_id: it failed").asRuntimeException();
            }
            sent.add(request);
            String n = String.valueOf(sent.size());
            SubmitJobResponse.Builder r = SubmitJobResponse.newBuilder();
            if (request.hasArray()) {
                return r.setArrayId("arr-00000000000" + n).setArrayCount(request.getArray().getCount())
                        .setJob(Job.newBuilder().setJobId("arr-00000000000" + n + "-0")
                                .setState(JobState.WAITING_FOR_DEPENDENCIES)).build();
            }
            return r.setJob(Job.newBuilder().setJobId("job-" + n).setState(JobState.PENDING)).build();
        }
    }

    @Test
    void jobs_come_after_the_jobs_they_name_and_otherwise_in_the_files_order() throws Exception {
        assertThat(order(PIPELINE)).extracting(DagFile.Node::name).containsExactly("prepare", "train", "evaluate");
        assertThat(order(PIPELINE).get(2).needs()).as("an id is no name of the file").containsExactly("train");
    }

    @Test
    void each_job_names_the_ids_its_dependencies_got_and_has_a_request_id_of_its_own() throws Exception {
        Scheduler scheduler = new Scheduler();
        List<String> printed = new ArrayList<>();
        List<DagSubmission.Submitted> done = DagSubmission.submit("acme", "nightly-7", order(PIPELINE),
                Map.<String, String>of()::get, scheduler, s -> printed.add(s.id() + " " + s.name()));
        assertThat(printed).containsExactly("job-1 prepare", "arr-000000000002 train", "job-3 evaluate");
        assertThat(scheduler.sent).extracting(SubmitJobRequest::getClientRequestId)
                .containsExactly("nightly-7/prepare", "nightly-7/train", "nightly-7/evaluate");
        assertThat(scheduler.sent).extracting(SubmitJobRequest::getTenant).containsOnly("acme");
        assertThat(scheduler.sent.get(1).getSpec().getAfterList()).extracting(d -> d.getJobId())
                .containsExactly("job-1");
        assertThat(scheduler.sent.get(1).getArray().getCount()).isEqualTo(2);
        assertThat(scheduler.sent.get(2).getSpec().getAfterList()).extracting(d -> d.getJobId() + " " + d.getOn())
                .as("the array's id for the array; an id of the file's own as it is")
                .containsExactly("arr-000000000002 AFTER_SUCCESS", "job-ext1 AFTER_ANY");
        assertThat(done).hasSize(3);
        assertThat(scheduler.sent.get(2).getSpec().getAfter(1).getOn()).isEqualTo(DependencyCondition.AFTER_ANY);
    }

    @Test
    void a_failure_part_way_says_how_far_it_got_and_a_rerun_sends_the_same_request_ids() throws Exception {
        Scheduler scheduler = new Scheduler();
        scheduler.refuse = "evaluate";
        assertThatThrownBy(() -> DagSubmission.submit("", "n", order(PIPELINE), Map.<String, String>of()::get,
                scheduler, s -> { })).isInstanceOfSatisfying(DagSubmission.Stopped.class, e -> {
                    assertThat(e.job).isEqualTo("evaluate");
                    assertThat(e.accepted).isEqualTo(2);
                });
        List<String> first = scheduler.sent.stream().map(SubmitJobRequest::getClientRequestId).toList();
        scheduler.refuse = null;
        scheduler.sent.clear();
        DagSubmission.submit("", "n", order(PIPELINE), Map.<String, String>of()::get, scheduler, s -> { });
        assertThat(scheduler.sent.stream().map(SubmitJobRequest::getClientRequestId).toList()).startsWith(
                first.toArray(String[]::new));
    }

    @Test
    void the_example_files_in_the_docs_read() throws Exception {
        Path examples = Path.of("..", "docs", "examples");
        assertThat(DagFile.order("pipeline.yaml", JobFile.read(examples.resolve("pipeline.yaml"))))
                .extracting(DagFile.Node::name).containsExactly("prepare", "sweep", "report");
        assertThat(JobFile.read(examples.resolve("sweep.yaml")).array().value().getCount()).isEqualTo(6);
    }

    @Test
    void a_long_name_gets_a_request_id_that_fits() {
        String id = DagSubmission.requestId("r".repeat(90), "n".repeat(20), true);
        assertThat(id).hasSizeLessThanOrEqualTo(100).startsWith("dag-")
                .isEqualTo(DagSubmission.requestId("r".repeat(90), "n".repeat(20), true));
        assertThat(DagSubmission.requestId("r".repeat(90), "n".repeat(20), false)).isEqualTo("r".repeat(90) + "/"
                + "n".repeat(20));
    }

    @Test
    void a_mistake_in_any_job_sends_nothing() throws Exception {
        Scheduler scheduler = new Scheduler();
        String bad = PIPELINE + "  - name: leak\n    secret_env: [NOT_SET_ANYWHERE]\n    command: [x]\n";
        assertThatThrownBy(() -> DagSubmission.submit("", "n", order(bad), Map.<String, String>of()::get,
                scheduler, s -> { })).hasMessageContaining("jobs[3] (leak): secret_env");
        assertThat(scheduler.sent).isEmpty();
    }

    /** Each bad DAG file and the words of its one error. */
    static final List<List<String>> BAD = List.of(
            List.of("""
                    jobs:
                      - name: a
                        after: [b]
                        command: [x]
                      - name: b
                        after: [{job: a}]
                        command: [x]
                    """, "line 6, column 13", "a cycle, a -> b -> a", "nothing was submitted"),
            List.of("""
                    jobs:
                      - name: a
                        after: [c]
                        command: [x]
                      - name: b
                        after: [a]
                        command: [x]
                      - name: c
                        after: [job-9, b]
                        command: [x]
                    """, "line 6, column 13", "a cycle, a -> c -> b -> a"),
            List.of("jobs:\n  - name: a\n    after: [a]\n    command: [x]\n", "line 3", "a cycle, a -> a"),
            List.of("jobs:\n  - name: a\n    command: [x]\n  - name: b\n    after: [trian]\n    command: [x]\n",
                    "line 5, column 13", "jobs[1].after: 'trian' is no job of this file (a, b)"),
            List.of("jobs:\n  - name: a\n    command: [x]\n  - name: a\n    command: [y]\n",
                    "jobs[1]: name 'a' is jobs[0]'s too"),
            List.of("jobs:\n  - command: [x]\n", "jobs[0]: every job of a DAG file has a name"),
            List.of("workers: 2\njobs:\n  - name: a\n    command: [x]\n", "top holds only tenant, request_id and jobs",
                    "workers goes in each job"),
            List.of("jobs:\n  - name: a\n    tenant: acme\n    command: [x]\n", "tenant and request_id go at the top"),
            List.of("jobs: []\n", "an empty list"),
            List.of("jobs:\n  - name: a\n    gpus: 2\n    command: [x]\n", "line 3", "unknown field 'gpus' in jobs"),
            List.of("jobs:\n  - name: a\n    command: [x]\n  - name: b\n    workers: two\n    command: [x]\n",
                    "line 5", "jobs[1].workers: 'two' is not a whole number"));

    @Test
    void a_bad_graph_is_one_error_naming_the_place_that_makes_it_bad() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (List<String> bad : BAD) {
            String message;
            try {
                order(bad.get(0));
                wrong.add(bad.get(0) + " -> accepted");
                continue;
            } catch (JobFile.Invalid e) {
                message = e.getMessage();
            }
            if (message.contains("\n") || !bad.subList(1, bad.size()).stream().allMatch(message::contains)) {
                wrong.add(bad.get(0).replace("\n", "\\n") + " -> " + message);
            }
        }
        assertThat(wrong).as("files whose error does not say what the list expects").isEmpty();
    }
}
