package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Timestamp;
import com.google.protobuf.util.JsonFormat;
import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WorkerPlacement;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The command line as a person meets it: mistyped choices, a scheduler that is not running, and
 * {@code get}. Not a framework test: a real gRPC server on a free port stands in for the scheduler.
 */
class GpucloudCliTest {

    static final Job RUNNING = Job.newBuilder()
            .setJobId("j-42").setTenant("acme").setState(JobState.RUNNING).setReason("placed on fabric a")
            .setSpec(JobSpec.newBuilder().setName("gpt-16x8").setWorkers(2).setGpusPerWorker(8)
                    .setInterconnect(Interconnect.INTERCONNECT_RDMA).setCapacity(CapacityPreference.CAPACITY_ON_DEMAND)
                    .setPriority(PriorityClass.PRIORITY_NORMAL).addCommand("sleep").addCommand("30"))
            .addPlacement(WorkerPlacement.newBuilder().setRank(0).setNodeId("sim-a100-0").setAllocationId("a-1")
                    .addAllGpuIndices(List.of(0, 1, 2, 3, 4, 5, 6, 7)))
            .addPlacement(WorkerPlacement.newBuilder().setRank(1).setNodeId("sim-a100-1").setAllocationId("a-2")
                    .addAllGpuIndices(List.of(0, 1, 2, 3, 4, 5, 6, 7)))
            .setSubmittedAt(Timestamp.newBuilder().setSeconds(1_800_000_000L))
            .setUpdatedAt(Timestamp.newBuilder().setSeconds(1_800_000_005L))
            .build();

    static final List<SubmitJobRequest> submitted = new ArrayList<>();
    static Server server;

    @BeforeAll
    static void startScheduler() throws Exception {
        server = ServerBuilder.forPort(0).addService(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void getJob(GetJobRequest request, StreamObserver<Job> response) {
                if (!request.getJobId().equals(RUNNING.getJobId())) {
                    response.onError(Status.NOT_FOUND.withDescription("job_id: no job " + request.getJobId())
                            .asRuntimeException());
                    return;
                }
                response.onNext(RUNNING);
                response.onCompleted();
            }

            @Override
            public void submitJob(SubmitJobRequest request, StreamObserver<SubmitJobResponse> response) {
                submitted.add(request);
                response.onNext(SubmitJobResponse.newBuilder().setJob(Job.newBuilder().setJobId("j-new")
                        .setState(JobState.PENDING).setSpec(request.getSpec())).build());
                response.onCompleted();
            }

            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                response.onNext(ListJobsResponse.newBuilder().addJobs(RUNNING).build());
                response.onCompleted();
            }
        }).addService(new dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc.ClusterServiceImplBase() {
            @Override
            public void drainNode(dev.gpucloud.contracts.grpc.v1.DrainNodeRequest request,
                    StreamObserver<dev.gpucloud.contracts.grpc.v1.NodeDrainResponse> response) {
                drains.add(request);
                response.onNext(dev.gpucloud.contracts.grpc.v1.NodeDrainResponse.newBuilder().setChanged(true)
                        .setNode(dev.gpucloud.contracts.grpc.v1.Node.newBuilder().setNodeId(request.getNodeId())
                                .setDraining(true).setCordonReason(request.getReason()))
                        .addJobsMoving("j-42").build());
                response.onCompleted();
            }
        }).build().start();
    }

    static final List<dev.gpucloud.contracts.grpc.v1.DrainNodeRequest> drains = new ArrayList<>();

    @Test
    void drain_sends_the_grace_in_seconds_and_names_the_jobs_it_moves() {
        Result r = cli("drain", "sim-a100-0", "--reason", "replace NIC", "--grace", "5m");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(drains.get(drains.size() - 1).getGraceSeconds()).isEqualTo(300);
        assertThat(r.out()).isEqualTo("sim-a100-0  drained  (replace NIC)\n  moving j-42\n");
        assertThat(cli("drain", "sim-a100-0", "--reason", "x").code()).isZero();
        assertThat(drains.get(drains.size() - 1).getGraceSeconds()).as("the scheduler's own grace").isZero();
    }

    @Test
    void a_bad_grace_or_no_reason_is_one_line_and_sends_nothing() {
        int before = drains.size();
        Result days = cli("drain", "sim-a100-0", "--reason", "x", "--grace", "2d");
        assertThat(days.code()).isEqualTo(2);
        assertOneLineError(days, "--grace must be a number of seconds, minutes or hours", "'2d'");
        Result long_ = cli("drain", "sim-a100-0", "--reason", "x", "--grace", "25h");
        assertOneLineError(long_, "--grace must be at most 24h");
        Result noReason = cli("cordon", "sim-a100-0");
        assertThat(noReason.code()).isEqualTo(2);
        assertOneLineError(noReason, "--reason");
        assertThat(drains).hasSize(before);
    }

    @AfterAll
    static void stopScheduler() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    record Result(int code, String out, String err) {
    }

    static Result cli(String... args) {
        return cliAt("localhost:" + server.getPort(), args);
    }

    static Result cliAt(String scheduler, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--scheduler", scheduler));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }

    static void assertOneLineError(Result r, String... fragments) {
        assertThat(r.err()).startsWith("error: ").containsOnlyOnce("\n").doesNotContain("\tat ", "Exception");
        assertThat(r.err()).contains(fragments);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void an_unknown_interconnect_is_one_line_listing_the_choices() {
        Result r = cli("submit", "--tenant", "acme", "--interconnect", "infiniband", "--", "sleep", "1");
        assertThat(r.code()).isEqualTo(2);
        assertOneLineError(r, "'infiniband' is not one of none, nvlink, rdma (any case)", "--interconnect",
                "gpucloud submit --help");
    }

    @Test
    void an_unknown_priority_is_one_line_listing_the_choices() {
        Result r = cli("submit", "--tenant", "acme", "--priority", "urgent", "--", "sleep", "1");
        assertThat(r.code()).isEqualTo(2);
        assertOneLineError(r, "'urgent' is not one of low, normal, high (any case)");
    }

    @Test
    void an_unknown_capacity_is_one_line_listing_the_choices() {
        Result r = cli("submit", "--tenant", "acme", "--capacity", "reserved", "--", "sleep", "1");
        assertThat(r.code()).isEqualTo(2);
        assertOneLineError(r, "'reserved' is not one of on-demand, spot, spot-preferred (any case)");
    }

    @Test
    void an_unknown_state_is_one_line_listing_the_states() {
        Result r = cli("jobs", "--state", "sleeping");
        assertThat(r.code()).isEqualTo(2);
        assertOneLineError(r, "pending, scheduled, running, checkpointing, succeeded, failed, cancelled");
    }

    @Test
    void choices_are_read_in_any_case_with_dash_or_underscore() {
        Result r = cli("submit", "--tenant", "acme", "--interconnect", "RDMA", "--capacity", "Spot_Preferred",
                "--priority", "HIGH", "--workers", "2", "--gpus", "8", "--", "sleep", "1");
        assertThat(r.code()).as(r.err()).isZero();
        JobSpec spec = submitted.get(submitted.size() - 1).getSpec();
        assertThat(spec.getInterconnect()).isEqualTo(Interconnect.INTERCONNECT_RDMA);
        assertThat(spec.getCapacity()).isEqualTo(CapacityPreference.CAPACITY_SPOT_PREFERRED);
        assertThat(spec.getPriority()).isEqualTo(PriorityClass.PRIORITY_HIGH);
        assertThat(r.out()).startsWith("j-new  PENDING");
    }

    @Test
    void secret_env_is_sent_apart_from_env_and_a_bare_name_takes_the_value_of_the_submitters_environment() {
        Result r = cli("submit", "--tenant", "acme", "--env", "MODE=fast", "--secret-env", "TOKEN=hunter2",
                "--secret-env", "PATH", "--", "sleep", "1");
        assertThat(r.code()).as(r.err()).isZero();
        JobSpec spec = submitted.get(submitted.size() - 1).getSpec();
        assertThat(spec.getEnvMap()).containsExactly(java.util.Map.entry("MODE", "fast"));
        assertThat(spec.getSecretEnvMap()).containsEntry("TOKEN", "hunter2")
                .containsEntry("PATH", System.getenv("PATH")).hasSize(2);
        assertThat(r.out() + r.err()).doesNotContain("hunter2");
    }

    @Test
    void a_bad_secret_env_is_one_line_naming_the_variable_never_a_value() {
        Result badName = cli("submit", "--tenant", "acme", "--secret-env", "1X=hunter2", "--", "sleep", "1");
        assertThat(badName.code()).isEqualTo(2);
        assertOneLineError(badName, "--secret-env needs NAME or NAME=VALUE", "'1X'", "gpucloud submit --help");
        assertThat(badName.err()).doesNotContain("hunter2");

        Result unset = cli("submit", "--tenant", "acme", "--secret-env", "GPUCLOUD_TEST_NO_SUCH_VARIABLE", "--",
                "sleep", "1");
        assertThat(unset.code()).isEqualTo(2);
        assertOneLineError(unset, "your environment has no variable GPUCLOUD_TEST_NO_SUCH_VARIABLE");

        Result twice = cli("submit", "--tenant", "acme", "--secret-env", "T=hunter2", "--secret-env", "T=x", "--",
                "sleep", "1");
        assertThat(twice.code()).isEqualTo(2);
        assertOneLineError(twice, "--secret-env T is given twice");
    }

    @Test
    void a_job_file_is_sent_as_its_spec_with_its_tenant_and_request_id_unless_the_flags_say_otherwise(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("job.yaml");
        java.nio.file.Files.writeString(file, """
                name: llama-ft
                tenant: acme
                request_id: llama-ft-1
                workers: 2
                resources: {gpus: 8, memory: 64Gi}
                interconnect: rdma
                command: [torchrun, train.py]
                """);
        Result r = cli("submit", "-f", file.toString());
        assertThat(r.code()).as(r.err()).isZero();
        SubmitJobRequest sent = submitted.get(submitted.size() - 1);
        assertThat(sent.getTenant()).isEqualTo("acme");
        assertThat(sent.getClientRequestId()).isEqualTo("llama-ft-1");
        assertThat(sent.getSpec().getName()).isEqualTo("llama-ft");
        assertThat(sent.getSpec().getWorkers()).isEqualTo(2);
        assertThat(sent.getSpec().getMemoryMibPerWorker()).isEqualTo(64 * 1024);
        assertThat(sent.getSpec().getInterconnect()).isEqualTo(Interconnect.INTERCONNECT_RDMA);
        assertThat(sent.getSpec().getCommandList()).containsExactly("torchrun", "train.py");
        assertThat(cli("submit", "--file", file.toString(), "--tenant", "globex", "--request-id", "again").code())
                .isZero();
        assertThat(submitted.get(submitted.size() - 1).getTenant()).isEqualTo("globex");
        assertThat(submitted.get(submitted.size() - 1).getClientRequestId()).isEqualTo("again");
    }

    @Test
    void a_bad_job_file_or_one_given_with_job_flags_is_one_line_and_sends_nothing(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("job.yaml");
        java.nio.file.Files.writeString(file, "command: [x]\nresources:\n  gpu: 8\n");
        int before = submitted.size();
        Result unknown = cli("submit", "-f", file.toString());
        assertThat(unknown.code()).isEqualTo(2);
        assertOneLineError(unknown, file + " line 3, column 3: unknown field 'gpu' in resources");
        java.nio.file.Files.writeString(file, "workers: 0\ncommand: [x]\n");
        assertOneLineError(cli("submit", "-f", file.toString()), file + ": workers: at least 1, is 0");
        java.nio.file.Files.writeString(file, "command: [x]\n");
        Result both = cli("submit", "-f", file.toString(), "--gpus", "2");
        assertThat(both.code()).isEqualTo(2);
        assertOneLineError(both, "the job is in " + file, "not also in --gpus");
        assertOneLineError(cli("submit", "-f", file.toString(), "--", "sleep", "1"), "a command after the flags");
        assertOneLineError(cli("submit", "-f", dir.resolve("none.yaml").toString()), "none.yaml: no such file");
        assertOneLineError(cli("submit", "--tenant", "acme"), "no command", "-f job.yaml");
        assertThat(submitted).hasSize(before);
    }

    @Test
    void every_command_answers_help_as_the_errors_tell_one_to_ask() {
        Result submit = cli("submit", "--help");
        assertThat(submit.code()).isZero();
        assertThat(submit.out()).contains("-f, --file=FILE", "--memory=SIZE", "--price-ceiling=USD");
        assertThat(cli("jobs", "-h").out()).startsWith("Usage: gpucloud jobs");
        assertThat(cli("invoice", "close", "--help").code()).isZero();
    }

    @Test
    void the_flags_for_cpu_memory_gpu_memory_deadline_and_price_read_the_job_files_units() {
        Result r = cli("submit", "--tenant", "acme", "--cpu", "500m", "--memory", "512Mi", "--min-gpu-memory", "40Gi",
                "--deadline", "2026-12-24T18:00:00Z", "--price-ceiling", "12.50", "--", "sleep", "1");
        assertThat(r.code()).as(r.err()).isZero();
        JobSpec spec = submitted.get(submitted.size() - 1).getSpec();
        assertThat(spec.getCpuMillisPerWorker()).isEqualTo(500);
        assertThat(spec.getMemoryMibPerWorker()).isEqualTo(512);
        assertThat(spec.getMinGpuMemoryMib()).isEqualTo(40 * 1024);
        assertThat(spec.getDeadline().getSeconds()).isEqualTo(java.time.Instant.parse("2026-12-24T18:00:00Z")
                .getEpochSecond());
        assertThat(spec.getPriceCeilingMicrosPerHour()).isEqualTo(12_500_000L);
        int before = submitted.size();
        assertOneLineError(cli("submit", "--tenant", "acme", "--memory", "64GB", "--", "sleep", "1"),
                "--memory: '64GB' is not an amount of memory", "64Gi");
        assertOneLineError(cli("submit", "--tenant", "acme", "--deadline", "friday", "--", "sleep", "1"),
                "--deadline: 'friday' is not a moment");
        assertThat(submitted).hasSize(before);
    }

    @Test
    void the_time_limit_flag_reads_a_duration_like_the_job_file() {
        assertThat(cli("submit", "--tenant", "acme", "--time-limit", "2h", "--", "sleep", "1").code()).isZero();
        assertThat(submitted.get(submitted.size() - 1).getSpec().getTimeLimitSeconds()).isEqualTo(7200);
        assertThat(cli("submit", "--tenant", "acme", "--time-limit", "90", "--", "sleep", "1").code()).isZero();
        assertThat(submitted.get(submitted.size() - 1).getSpec().getTimeLimitSeconds()).isEqualTo(90);
        int before = submitted.size();
        assertOneLineError(cli("submit", "--tenant", "acme", "--time-limit", "2d", "--", "sleep", "1"),
                "--time-limit: '2d' is not a duration");
        assertOneLineError(cli("submit", "--tenant", "acme", "--time-limit", "9000h", "--", "sleep", "1"),
                "--time-limit", "more than a year");
        assertThat(submitted).hasSize(before);
    }

    @Test
    void a_refused_connection_names_the_address_and_how_to_start_the_stack() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        Result r = cliAt("localhost:" + closed, "jobs");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: cannot reach the scheduler at localhost:" + closed)
                .contains("./gpucloud up").containsOnlyOnce("\n").doesNotContain("\tat ");
    }

    @Test
    void get_prints_state_reason_placement_and_times() {
        Result r = cli("get", "j-42");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains(
                "job          j-42",
                "state        RUNNING",
                "reason       placed on fabric a",
                "asks         2 workers x 8 GPUs, rdma, on-demand, normal priority",
                "placement    rank 0: sim-a100-0 GPUs [0, 1, 2, 3, 4, 5, 6, 7] (allocation a-1)",
                "             rank 1: sim-a100-1 GPUs [0, 1, 2, 3, 4, 5, 6, 7] (allocation a-2)",
                "submitted    2027-01-15T08:00:00Z",
                "updated      2027-01-15T08:00:05Z");
    }

    @Test
    void get_lists_the_names_of_a_jobs_secret_variables_as_the_scheduler_sends_them() {
        Job withSecrets = RUNNING.toBuilder().setSpec(RUNNING.getSpec().toBuilder()
                .putSecretEnv("WANDB_API_KEY", "(secret)").putSecretEnv("HF_TOKEN", "(secret)")).build();

        assertThat(JobView.text(withSecrets)).contains("secret env   HF_TOKEN, WANDB_API_KEY\n");
        assertThat(JobView.text(RUNNING)).doesNotContain("secret env");
    }

    @Test
    void get_json_is_protobufs_json_mapping_of_the_job() throws Exception {
        Result r = cli("get", "j-42", "-o", "JSON");
        assertThat(r.code()).as(r.err()).isZero();
        Job.Builder parsed = Job.newBuilder();
        JsonFormat.parser().merge(r.out(), parsed);
        assertThat(parsed.build()).isEqualTo(RUNNING);
        assertThat(r.out()).contains("\"jobId\": \"j-42\"", "\"state\": \"RUNNING\"", "\"nodeId\": \"sim-a100-1\"");
    }

    @Test
    void get_of_an_unknown_job_is_the_servers_status_in_one_line() {
        Result r = cli("get", "j-missing");
        assertThat(r.code()).isEqualTo(1);
        assertOneLineError(r, "NOT_FOUND: job_id: no job j-missing");
    }
}
