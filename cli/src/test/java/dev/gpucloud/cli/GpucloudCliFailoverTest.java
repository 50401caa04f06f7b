package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Timestamp;
import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.client.SchedulerUnavailableException;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.ListNodesResponse;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The CLI against several scheduler instances, one leading: a standby answers reads and turns writes
 * away with UNAVAILABLE, naming the leader in the gpucloud-leader trailer when it knows one. Real
 * gRPC servers on free loopback ports stand in for the instances.
 */
class GpucloudCliFailoverTest {

    /** One scheduler instance as the HA contract describes it, recording what reached it. */
    static final class Instance {
        final String name;
        final Server server;
        final List<SubmitJobRequest> submits = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger calls = new AtomicInteger();
        volatile boolean leading;
        /** The leader's address a standby puts in its trailer; null while it knows none. */
        volatile String leaderAddress;
        /** Writes still to fail with a bare UNAVAILABLE, as a leader does whose answer is lost. */
        final AtomicInteger writesToDrop = new AtomicInteger();
        /** A write's answer other than UNAVAILABLE, e.g. RESOURCE_EXHAUSTED for quota. */
        volatile Status refuseWritesWith;
        volatile List<JobEvent> watchEvents = List.of();
        volatile boolean watchBreaks;

        Instance(String name, boolean leading) throws IOException {
            this.name = name;
            this.leading = leading;
            this.server = ServerBuilder.forPort(0).addService(new Jobs()).addService(new Cluster()).build().start();
        }

        String address() {
            return "localhost:" + server.getPort();
        }

        /** Whether a write may go ahead here; if not, the caller has been answered. */
        boolean writable(StreamObserver<?> response) {
            if (refuseWritesWith != null) {
                response.onError(refuseWritesWith.asRuntimeException());
                return false;
            }
            if (writesToDrop.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                response.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
                return false;
            }
            if (leading) {
                return true;
            }
            Metadata trailers = new Metadata();
            String leader = leaderAddress;
            if (leader != null) {
                trailers.put(LeaderFailover.LEADER_TRAILER, leader);
            }
            response.onError(Status.UNAVAILABLE.withDescription(name + " is a standby; "
                    + (leader == null ? "no leader is known" : "the leader is at " + leader)).asRuntimeException(trailers));
            return false;
        }

        final class Jobs extends JobServiceGrpc.JobServiceImplBase {
            @Override
            public void submitJob(SubmitJobRequest request, StreamObserver<SubmitJobResponse> response) {
                calls.incrementAndGet();
                submits.add(request);
                if (writable(response)) {
                    response.onNext(SubmitJobResponse.newBuilder().setJob(Job.newBuilder().setJobId("j-" + name)
                            .setState(JobState.PENDING)).build());
                    response.onCompleted();
                }
            }

            @Override
            public void cancelJob(CancelJobRequest request, StreamObserver<Job> response) {
                calls.incrementAndGet();
                if (writable(response)) {
                    response.onNext(Job.newBuilder().setJobId(request.getJobId()).setState(JobState.CANCELLED)
                            .setReason("cancelled at " + name).build());
                    response.onCompleted();
                }
            }

            @Override
            public void getJob(GetJobRequest request, StreamObserver<Job> response) {
                calls.incrementAndGet();
                response.onError(Status.NOT_FOUND.withDescription("job_id: no job " + request.getJobId())
                        .asRuntimeException());
            }

            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                calls.incrementAndGet();
                response.onNext(ListJobsResponse.newBuilder().addJobs(Job.newBuilder().setJobId("j-listed-by-" + name)
                        .setTenant("acme").setState(JobState.RUNNING)).build());
                response.onCompleted();
            }

            @Override
            public void watchJob(WatchJobRequest request, StreamObserver<JobEvent> response) {
                calls.incrementAndGet();
                watchEvents.forEach(response::onNext);
                if (watchBreaks) {
                    response.onError(Status.UNAVAILABLE.withDescription(name + " is shutting down").asRuntimeException());
                } else {
                    response.onCompleted();
                }
            }
        }

        final class Cluster extends ClusterServiceGrpc.ClusterServiceImplBase {
            @Override
            public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> response) {
                calls.incrementAndGet();
                response.onNext(ListNodesResponse.newBuilder().addNodes(Node.newBuilder().setNodeId("sim-a100-0")
                        .setInstanceType("p4d.24xlarge")).build());
                response.onCompleted();
            }
        }
    }

    final List<Instance> instances = new ArrayList<>();

    Instance leader(String name) throws IOException {
        Instance i = new Instance(name, true);
        instances.add(i);
        return i;
    }

    Instance standby(String name, Instance leader) throws IOException {
        Instance i = new Instance(name, false);
        i.leaderAddress = leader == null ? null : leader.address();
        instances.add(i);
        return i;
    }

    @AfterEach
    void stopInstances() throws InterruptedException {
        for (Instance i : instances) {
            i.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static String closedAddress() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return "localhost:" + socket.getLocalPort();
        }
    }

    static String list(Object... addresses) {
        List<String> all = new ArrayList<>();
        for (Object a : addresses) {
            all.add(a instanceof Instance i ? i.address() : (String) a);
        }
        return String.join(",", all);
    }

    record Result(int code, String out, String err) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    static Result cli(String schedulers, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--scheduler", schedulers));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }

    static Result submit(String schedulers, String... options) {
        List<String> args = new ArrayList<>(List.of("submit", "--tenant", "acme"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "sleep", "1"));
        return cli(schedulers, args.toArray(String[]::new));
    }

    static JobEvent event(JobState state, long at) {
        return JobEvent.newBuilder().setJobId("j-1").setState(state).setReason(state.name().toLowerCase())
                .setAt(Timestamp.newBuilder().setSeconds(1_800_000_000L + at)).build();
    }

    @Test
    void a_submit_at_a_standby_moves_to_the_leader_its_trailer_names() throws IOException {
        Instance leader = leader("scheduler-0");
        Instance standby = standby("scheduler-1", leader);

        Result r = submit(list(standby));

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("j-scheduler-0  PENDING");
        assertThat(r.errLines()).containsExactly("scheduler-1 is a standby; retrying at the leader " + leader.address());
        assertThat(leader.submits).hasSize(1);
    }

    @Test
    void without_a_trailer_the_next_address_in_the_list_is_tried() throws IOException {
        Instance standby = standby("scheduler-1", null);
        Instance leader = leader("scheduler-0");

        Result r = submit(list(standby, leader));

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("j-scheduler-0  PENDING");
        assertThat(r.errLines()).containsExactly(
                standby.address() + ": scheduler-1 is a standby; retrying at " + leader.address());
    }

    @Test
    void an_instance_that_refuses_the_connection_is_passed_over_for_the_next() throws IOException {
        String down = closedAddress();
        Instance leader = leader("scheduler-1");

        Result r = cli(list(down, leader), "cancel", "j-7");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("j-7  CANCELLED  cancelled at scheduler-1");
        assertThat(r.errLines()).containsExactly(down + ": connection refused; retrying at " + leader.address());
    }

    @Test
    void every_try_of_one_submit_carries_the_same_client_request_id() throws IOException {
        Instance leader = leader("scheduler-0");
        Instance standby = standby("scheduler-1", leader);
        leader.writesToDrop.set(1); // the leader's first answer is lost on the way back

        Result r = submit(list(standby, leader));

        assertThat(r.code()).as(r.err()).isZero();
        List<SubmitJobRequest> tries = new ArrayList<>(standby.submits);
        tries.addAll(leader.submits);
        // standby (trailer: go to the leader at once), leader (answer lost, no trailer: next in the list),
        // standby again (back-off), leader again
        assertThat(tries).hasSize(4);
        assertThat(tries).extracting(SubmitJobRequest::getClientRequestId).containsOnly(tries.get(0).getClientRequestId())
                .allSatisfy(id -> assertThat(id).isNotBlank());
    }

    @Test
    void a_status_other_than_unavailable_is_the_answer_not_a_reason_to_move() throws IOException {
        Instance first = leader("scheduler-0");
        Instance second = leader("scheduler-1");
        first.refuseWritesWith = Status.RESOURCE_EXHAUSTED.withDescription("tenant acme: GPU quota 8 reached");

        Result submitted = submit(list(first, second));
        Result got = cli(list(first, second), "get", "j-missing");

        assertThat(submitted.code()).isEqualTo(1);
        assertThat(submitted.err()).isEqualTo("error: RESOURCE_EXHAUSTED: tenant acme: GPU quota 8 reached\n");
        assertThat(got.code()).isEqualTo(1);
        assertThat(got.err()).isEqualTo("error: NOT_FOUND: job_id: no job j-missing\n");
        assertThat(first.calls).hasValue(2);
        assertThat(second.calls).hasValue(0);
    }

    @Test
    void reads_are_answered_by_a_standby_without_moving() throws IOException {
        Instance leader = leader("scheduler-0");
        Instance standby = standby("scheduler-1", leader);

        Result jobs = cli(list(standby, leader), "jobs");
        Result nodes = cli(list(standby, leader), "nodes");

        assertThat(jobs.out()).contains("j-listed-by-scheduler-1");
        assertThat(nodes.out()).contains("sim-a100-0");
        assertThat(jobs.err() + nodes.err()).isEmpty();
        assertThat(leader.calls).hasValue(0);
    }

    @Test
    void when_every_address_refuses_the_error_names_them_and_how_to_start_the_stack() throws IOException {
        String a = closedAddress();
        String b = closedAddress();

        Result r = cli(list(a, b), "jobs");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.errLines()).hasSize(2);
        assertThat(r.errLines().get(0)).isEqualTo(a + ": connection refused; retrying at " + b);
        assertThat(r.errLines().get(1)).isEqualTo("error: cannot reach the scheduler at " + a + "," + b
                + ": connection refused; start the stack with ./gpucloud up, or point --server (env GPUCLOUD_SERVER,"
                + " or a context: gpucloud config use-context) at a running one");
    }

    @Test
    void a_write_that_no_leader_takes_gives_up_after_the_failover_timeout() throws IOException {
        Instance a = standby("scheduler-0", null);
        Instance b = standby("scheduler-1", null);

        Result bounded = cli(list(a, b), "--failover-timeout", "0.5", "cancel", "j-1");

        assertThat(bounded.code()).isEqualTo(1);
        List<String> lines = bounded.errLines();
        assertThat(lines.get(lines.size() - 1)).startsWith("error: no scheduler at " + list(a, b) + " took the call within")
                .contains("scheduler-1 is a standby; no leader is known", "--failover-timeout");
        assertThat(lines.subList(0, lines.size() - 1)).allSatisfy(line -> assertThat(line).contains("; retrying at"));
        assertThat(a.calls.get() + b.calls.get()).isGreaterThan(1);
    }

    @Test
    void the_time_spent_moving_never_passes_the_failover_timeout() throws IOException {
        Instance a = standby("scheduler-0", null);
        Instance b = standby("scheduler-1", null);
        long[] slept = {0};
        LeaderFailover.Clock pretend = new LeaderFailover.Clock() {
            @Override
            public long nanoTime() {
                return slept[0];
            }

            @Override
            public void sleep(Duration d) {
                slept[0] += d.toNanos();
            }
        };
        List<String> notices = new ArrayList<>();
        try (LeaderFailover failover = new LeaderFailover(List.of(a.address(), b.address()), Duration.ofSeconds(5),
                notices::add, address -> ManagedChannelBuilder.forTarget(address).usePlaintext().build(), pretend)) {
            assertThatThrownBy(() -> failover.call(ch -> JobServiceGrpc.newBlockingStub(ch)
                    .cancelJob(CancelJobRequest.newBuilder().setJobId("j-1").build())))
                    .isInstanceOfSatisfying(SchedulerUnavailableException.class,
                            e -> assertThat(e.noneReachable()).isFalse());
        }
        // waits 0.2 + 0.4 + 0.8 + 1.6 + 2 = 5 s across five moves; a sixth wait would pass the bound
        assertThat(Duration.ofNanos(slept[0])).isEqualTo(Duration.ofSeconds(5));
        assertThat(notices).hasSize(5);
        assertThat(a.calls.get() + b.calls.get()).isEqualTo(6);
    }

    @Test
    void a_broken_watch_is_reopened_at_the_next_instance_and_prints_each_event_once() throws IOException {
        Instance first = leader("scheduler-0");
        Instance second = standby("scheduler-1", null);
        first.watchEvents = List.of(event(JobState.PENDING, 0), event(JobState.SCHEDULED, 1));
        first.watchBreaks = true;
        // a re-opened stream starts from the job's current state, which was already printed
        second.watchEvents = List.of(event(JobState.SCHEDULED, 1), event(JobState.RUNNING, 2),
                event(JobState.SUCCEEDED, 9));

        Result r = cli(list(first, second), "watch", "j-1");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().map(line -> line.split("\\s+")[1]))
                .containsExactly("PENDING", "SCHEDULED", "RUNNING", "SUCCEEDED");
        assertThat(r.errLines()).containsExactly(
                first.address() + ": scheduler-0 is shutting down; retrying at " + second.address());
    }

    @Test
    void watch_json_is_one_job_event_a_line_and_still_each_event_once() throws Exception {
        Instance first = leader("scheduler-0");
        Instance second = standby("scheduler-1", null);
        first.watchEvents = List.of(event(JobState.PENDING, 0), event(JobState.SCHEDULED, 1));
        first.watchBreaks = true;
        second.watchEvents = List.of(event(JobState.SCHEDULED, 1), event(JobState.SUCCEEDED, 9));

        Result r = cli(list(first, second), "watch", "j-1", "-o", "json");

        assertThat(r.code()).as(r.err()).isZero();
        List<String> states = new java.util.ArrayList<>();
        for (String line : r.out().lines().toList()) {
            dev.gpucloud.contracts.grpc.v1.JobEvent.Builder e = dev.gpucloud.contracts.grpc.v1.JobEvent.newBuilder();
            com.google.protobuf.util.JsonFormat.parser().merge(line, e);
            states.add(e.getState().name());
        }
        assertThat(states).containsExactly("PENDING", "SCHEDULED", "SUCCEEDED");
        Result yaml = cli(list(first, second), "watch", "j-1", "-o", "yaml");
        assertThat(yaml.code()).isEqualTo(2);
        assertThat(yaml.err()).contains("-o yaml: gpucloud watch prints text, json");
    }
}
