package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Timestamp;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.LogChunk;
import dev.gpucloud.contracts.grpc.v1.LogLine;
import dev.gpucloud.contracts.grpc.v1.LogStream;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gpucloud logs JOB} against a real gRPC server whose JobService is a fake: GetJob knows a one-worker job, a
 * two-worker job, a job that never ran and nothing else; each test says what StreamLogs sends.
 */
class LogsCommandTest {

    static final Job SOLO = job("job-solo", 1);
    static final Job PAIR = job("job-pair", 2);
    static final Job WAITING = job("job-waiting", 1);

    @TempDir
    Path home;
    Server server;
    JobServiceGrpc.JobServiceImplBase service;
    final List<StreamLogsRequest> requests = new CopyOnWriteArrayList<>();
    /** What the n-th StreamLogs call (0-based) does with its observer. */
    final List<BiConsumer<StreamLogsRequest, StreamObserver<LogChunk>>> answers = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        System.setProperty("gpucloud.home", home.toString());
        service = new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void getJob(GetJobRequest request, StreamObserver<Job> response) {
                for (Job j : List.of(SOLO, PAIR, WAITING)) {
                    if (j.getJobId().equals(request.getJobId())) {
                        response.onNext(j);
                        response.onCompleted();
                        return;
                    }
                }
                response.onError(Status.NOT_FOUND.withDescription("job '" + request.getJobId() + "' not found")
                        .asRuntimeException());
            }

            @Override
            public void streamLogs(StreamLogsRequest request, StreamObserver<LogChunk> response) {
                int n = requests.size();
                requests.add(request);
                if (request.getJobId().equals(WAITING.getJobId())) {
                    response.onError(Status.FAILED_PRECONDITION.withDescription("job 'job-waiting' has not run")
                            .asRuntimeException());
                    return;
                }
                answers.get(Math.min(n, answers.size() - 1)).accept(request, response);
            }
        };
        server = ServerBuilder.forPort(0).addService(service).build().start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        System.clearProperty("gpucloud.home");
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    static Job job(String id, int workers) {
        return Job.newBuilder().setJobId(id).setTenant("acme").setState(JobState.RUNNING)
                .setSpec(JobSpec.newBuilder().setName(id).setWorkers(workers).setGpusPerWorker(1)).build();
    }

    static LogLine line(long offset, String text) {
        return LogLine.newBuilder().setOffset(offset).setText(text)
                .setAt(Timestamp.newBuilder().setSeconds(1_800_000_000L + offset)).build();
    }

    static LogChunk chunk(String job, int rank, LogStream stream, LogLine... lines) {
        return LogChunk.newBuilder().setJobId(job).setAllocationId("a-" + rank).setRank(rank).setStream(stream)
                .setNodeId("sim-a100-" + rank).addAllLines(List.of(lines)).build();
    }

    /** StreamLogs sends these chunks and ends. */
    static BiConsumer<StreamLogsRequest, StreamObserver<LogChunk>> sends(LogChunk... chunks) {
        return (request, response) -> {
            for (LogChunk c : chunks) {
                response.onNext(c);
            }
            response.onCompleted();
        };
    }

    GpucloudCliTest.Result logs(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--server", "localhost:" + server.getPort(), "logs"));
        all.addAll(List.of(args));
        int code = GpucloudCli.run(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err),
                Map.<String, String>of()::get);
        return new GpucloudCliTest.Result(code, out.toString(), err.toString());
    }

    @Test
    void one_workers_lines_print_bare_in_order() {
        answers.add(sends(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "epoch 1"), line(8, "epoch 2")),
                chunk("job-solo", 0, LogStream.LOG_STDERR, line(0, "warning: slow disk")),
                chunk("job-solo", 0, LogStream.LOG_STDOUT, line(16, "done"))));
        GpucloudCliTest.Result r = logs("job-solo");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("epoch 1\nepoch 2\nwarning: slow disk\ndone\n");
        assertThat(requests.get(0).getJobId()).isEqualTo("job-solo");
        assertThat(requests.get(0).getFollow()).isFalse();
        assertThat(requests.get(0).hasRank()).isFalse();
        assertThat(requests.get(0).hasSince()).isFalse();
    }

    @Test
    void timestamps_put_when_the_agent_read_each_line_first() {
        answers.add(sends(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "epoch 1"))));
        GpucloudCliTest.Result r = logs("job-solo", "--timestamps");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("2027-01-15T08:00:00Z epoch 1\n");
    }

    @Test
    void several_workers_lines_carry_their_rank_and_stream() {
        answers.add(sends(chunk("job-pair", 0, LogStream.LOG_STDOUT, line(0, "rank zero up")),
                chunk("job-pair", 1, LogStream.LOG_STDERR, line(0, "rank one complains")),
                chunk("job-pair", 0, LogStream.LOG_STDOUT, line(13, "rank zero done"))));
        GpucloudCliTest.Result r = logs("job-pair");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[rank 0 stdout] rank zero up\n[rank 1 stderr] rank one complains\n"
                + "[rank 0 stdout] rank zero done\n");
    }

    @Test
    void one_rank_of_several_is_asked_for_and_printed_bare() {
        answers.add(sends(chunk("job-pair", 1, LogStream.LOG_STDERR, line(0, "only me"))));
        GpucloudCliTest.Result r = logs("job-pair", "--rank", "1", "--stream", "STDERR", "-f");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("only me\n");
        assertThat(requests.get(0).getRank()).isEqualTo(1);
        assertThat(requests.get(0).getStream()).isEqualTo(LogStream.LOG_STDERR);
        assertThat(requests.get(0).getFollow()).isTrue();
    }

    @Test
    void a_line_split_in_parts_is_joined_even_across_chunks_and_other_workers_lines() {
        LogLine first = line(0, "aaaa").toBuilder().setContinued(true).build();
        LogLine second = line(4, "bbbb").toBuilder().setContinued(true).build();
        answers.add(sends(chunk("job-pair", 0, LogStream.LOG_STDOUT, first),
                chunk("job-pair", 1, LogStream.LOG_STDOUT, line(0, "between")),
                chunk("job-pair", 0, LogStream.LOG_STDOUT, second, line(8, "cccc"))));
        GpucloudCliTest.Result r = logs("job-pair");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[rank 1 stdout] between\n[rank 0 stdout] aaaabbbbcccc\n");
    }

    @Test
    void dropped_lines_are_a_note_on_stderr_not_output() {
        LogLine marker = LogLine.newBuilder().setOffset(100).setDroppedLines(1200).setDroppedBytes(96_000)
                .setAt(Timestamp.newBuilder().setSeconds(1_800_000_100L)).build();
        answers.add(sends(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "before"), marker, line(200, "after"))));
        GpucloudCliTest.Result r = logs("job-solo");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("before\nafter\n");
        assertThat(r.err()).startsWith("note: 1200 line(s), 96000 byte(s) dropped here")
                .contains("still in its log file on sim-a100-0").containsOnlyOnce("\n");
    }

    @Test
    void json_is_one_chunk_a_line_in_protobufs_mapping() throws Exception {
        answers.add(sends(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "epoch 1"), line(8, "epoch 2"))));
        GpucloudCliTest.Result r = logs("job-solo", "-o", "json");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines()).hasSize(1);
        LogChunk.Builder parsed = LogChunk.newBuilder();
        com.google.protobuf.util.JsonFormat.parser().merge(r.out(), parsed);
        assertThat(parsed.getLinesList()).extracting(LogLine::getText).containsExactly("epoch 1", "epoch 2");
        assertThat(r.out()).contains("\"allocationId\":\"a-0\"", "\"stream\":\"LOG_STDOUT\"");
    }

    @Test
    void a_broken_follow_is_reopened_from_the_last_line_seen_and_prints_no_line_twice() {
        answers.add((request, response) -> {
            response.onNext(chunk("job-pair", 0, LogStream.LOG_STDOUT, line(0, "zero-a"), line(7, "zero-b")));
            response.onNext(chunk("job-pair", 1, LogStream.LOG_STDOUT, line(0, "one-a")));
            response.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
        });
        // the re-opened stream starts at the earliest last line and so repeats what was printed
        answers.add(sends(chunk("job-pair", 1, LogStream.LOG_STDOUT, line(0, "one-a"), line(6, "one-b")),
                chunk("job-pair", 0, LogStream.LOG_STDOUT, line(7, "zero-b"), line(14, "zero-c"))));
        GpucloudCliTest.Result r = logs("job-pair", "-f");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("[rank 0 stdout] zero-a\n[rank 0 stdout] zero-b\n[rank 1 stdout] one-a\n"
                + "[rank 1 stdout] one-b\n[rank 0 stdout] zero-c\n");
        assertThat(requests).hasSize(2);
        assertThat(requests.get(1).getFollow()).isTrue();
        assertThat(requests.get(1).getSince()).as("the earlier of the two workers' last lines")
                .isEqualTo(line(0, "").getAt());
        assertThat(r.err()).contains("retrying at localhost:" + server.getPort());
    }

    @Test
    void a_follow_waits_for_a_scheduler_that_restarts_and_goes_on_where_it_was() throws Exception {
        answers.add((request, response) -> {
            response.onNext(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "one"), line(4, "two")));
            // and the stream stays open until the server goes
        });
        answers.add(sends(chunk("job-solo", 0, LogStream.LOG_STDOUT, line(0, "one"), line(4, "two"), line(8, "three"))));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int port = server.getPort();
        int[] code = {-1};
        Thread follow = new Thread(() -> code[0] = GpucloudCli.run(new String[] {"--server", "localhost:" + port,
                "logs", "-f", "job-solo"}, new PrintWriter(out), new PrintWriter(err), Map.<String, String>of()::get));
        follow.start();
        awaitText(out, "two\n");
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        awaitText(err, "went away"); // it found nothing listening, and waits
        server = ServerBuilder.forPort(port).addService(service).build().start();
        follow.join(60_000);

        assertThat(follow.isAlive()).isFalse();
        assertThat(code[0]).as(err.toString()).isZero();
        assertThat(out.toString()).isEqualTo("one\ntwo\nthree\n");
        assertThat(err.toString()).contains("note: the scheduler at localhost:" + port + " went away; waiting up to 30s");
    }

    /** Waits until {@code writer} holds {@code text}; a bound on a wait, not a measured time. */
    static void awaitText(StringWriter writer, String text) throws InterruptedException {
        for (int i = 0; i < 600 && !writer.toString().contains(text); i++) {
            Thread.sleep(50);
        }
        assertThat(writer.toString()).as("waited for '%s'", text).contains(text);
    }

    @Test
    void since_a_time_is_sent_as_that_instant() {
        answers.add(sends());
        GpucloudCliTest.Result r = logs("job-solo", "--since", "2026-12-07T10:00:00Z");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(requests.get(0).getSince().getSeconds())
                .isEqualTo(java.time.Instant.parse("2026-12-07T10:00:00Z").getEpochSecond());
        answers.add(sends());
        assertThat(logs("job-solo", "--since", "15m").code()).isZero();
        assertThat(requests.get(1).hasSince()).isTrue();
    }

    @Test
    void an_unknown_job_says_so_and_where_to_look() {
        GpucloudCliTest.Result r = logs("job-nope");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "no job job-nope that you may see", "gpucloud jobs lists yours");
    }

    @Test
    void a_job_that_never_ran_says_why_there_is_no_output_and_what_to_do() {
        GpucloudCliTest.Result r = logs("job-waiting");
        assertThat(r.code()).isEqualTo(1);
        GpucloudCliTest.assertOneLineError(r, "job job-waiting has no output yet", "gpucloud get job-waiting",
                "gpucloud logs -f job-waiting");
    }

    @Test
    void bad_options_are_one_line_and_open_no_stream() {
        answers.add(sends());
        GpucloudCliTest.assertOneLineError(logs("job-solo", "--rank", "-1"), "--rank must be a worker's rank, 0 or"
                + " more, was -1", "gpucloud logs --help");
        GpucloudCliTest.assertOneLineError(logs("job-pair", "--rank", "2"), "--rank 2: job job-pair has 2 worker(s),"
                + " ranks 0..1");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "--rank", "first"), "--rank");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "--since", "yesterday"), "--since must be a duration",
                "'yesterday'");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "--since", "2026-12-07T10:00:00"), "--since must be");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "--stream", "stdin"), "'stdin' is not one of stdout,"
                + " stderr");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "-o", "yaml"), "-o yaml: gpucloud logs prints text, json");
        GpucloudCliTest.assertOneLineError(logs("job-solo", "-o", "xml"), "'xml' is not one of text, wide, json, yaml");
        GpucloudCliTest.assertOneLineError(logs(), "JOB");
        assertThat(requests).isEmpty();
    }
}
