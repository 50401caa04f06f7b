package dev.gpucloud.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gpucloud trace JOB} on span logs written as the services write them (one JSON object a line). */
class TraceCommandTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    @TempDir
    Path spans;

    record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = GpucloudCli.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }

    private static String span(String id, String parent, String service, String name, String start, String end,
            String attributes) {
        return "{\"trace_id\":\"" + TRACE + "\",\"span_id\":\"" + id + "\","
                + (parent == null ? "" : "\"parent_span_id\":\"" + parent + "\",")
                + "\"name\":\"" + name + "\",\"kind\":\"INTERNAL\",\"service\":\"" + service + "\",\"start\":\""
                + start + "\",\"end\":\"" + end + "\",\"status\":\"UNSET\",\"attributes\":{" + attributes + "}}\n";
    }

    @BeforeEach
    void writeSpanLogs() throws Exception {
        Files.writeString(spans.resolve("scheduler.jsonl"),
                span("a000000000000001", null, "scheduler", "JobService/SubmitJob", "2026-12-06T10:00:00Z",
                        "2026-12-06T10:00:00.050Z", "\"rpc.method\":\"SubmitJob\"")
                + span("a000000000000002", "a000000000000001", "scheduler", "accept job", "2026-12-06T10:00:00.001Z",
                        "2026-12-06T10:00:00.040Z", "\"job_id\":\"job-1\",\"tenant\":\"acme\"")
                + span("a000000000000003", "a000000000000002", "scheduler", "place job", "2026-12-06T10:00:00.300Z",
                        "2026-12-06T10:00:00.310Z", "\"job_id\":\"job-1\",\"node_id\":\"h-0\""));
        Files.writeString(spans.resolve("node-agent.jsonl"),
                span("b000000000000001", "a000000000000003", "node-agent", "node.commands START",
                        "2026-12-06T10:00:00.400Z", "2026-12-06T10:00:00.420Z",
                        "\"job_id\":\"job-1\",\"allocation_id\":\"a-1\"")
                + "{half a line");
    }

    @Test
    void prints_the_job_as_one_tree_in_start_order() {
        Result r = run("trace", "job-1", "--spans", spans.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("trace " + TRACE + "\n");
        assertThat(r.out().lines().skip(1).toList()).hasSize(4);
        assertThat(r.out()).contains("scheduler   JobService/SubmitJob rpc.method=SubmitJob")
                .containsPattern("\\+300\\.0ms +10\\.0ms +    scheduler   place job node_id=h-0")
                .containsPattern("node-agent  node.commands START allocation_id=a-1");
        assertThat(r.err()).contains("skipped 1 line(s)");
    }

    @Test
    void json_gives_one_span_a_line() {
        Result r = run("trace", "job-1", "--spans", spans.toString(), "-o", "json");
        assertThat(r.code()).isZero();
        assertThat(r.out().lines()).hasSize(4).allSatisfy(line -> assertThat(line).startsWith("{\"trace_id\":\""));
        assertThat(r.out()).contains("\"duration_ms\":10.0");
    }

    @Test
    void bad_input_says_what_is_wrong() {
        Result unknown = run("trace", "job-2", "--spans", spans.toString());
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).contains("error: no span of job-2 in " + spans + " (4 spans in 2 file(s))");

        Result missing = run("trace", "job-1", "--spans", spans.resolve("nowhere").toString());
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("error: no span log at " + spans.resolve("nowhere"))
                .contains("./gpucloud up");

        Result malformed = run("trace", "job 1; rm -rf /", "--spans", spans.toString());
        assertThat(malformed.code()).isEqualTo(2);
        assertThat(malformed.err()).contains("JOB must be a job id such as job-3f2a9c0d1e4b, was 'job 1; rm -rf /'");

        assertThat(run("trace").code()).isEqualTo(2);
    }
}
