package dev.gpucloud.scheduler.sim.trace;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TraceSummaryTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return TraceSummary.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    static Stream<Arguments> formats() {
        return Stream.of(
                Arguments.of("philly-small.csv", TraceFormat.PHILLY),
                Arguments.of("muri-small.csv", TraceFormat.MURI),
                Arguments.of("openb-nodes-small.csv", TraceFormat.OPENB_NODES),
                Arguments.of("openb-pods-small.csv", TraceFormat.OPENB_PODS));
    }

    @ParameterizedTest(name = "{0} is {1}")
    @MethodSource("formats")
    void the_format_is_recognised_from_the_header(String file, TraceFormat format) {
        assertThat(TraceFormat.detect(fixture(file))).isEqualTo(format);
    }

    @Test
    void an_unknown_header_or_an_empty_file_is_not_a_trace() {
        assertThatThrownBy(() -> TraceFormat.detect(write(dir, "x.csv", "a,b", "1,2")))
                .hasMessage("x.csv:1: header matches no known trace format (Philly, Muri, openb nodes, openb pods)");
        assertThatThrownBy(() -> TraceFormat.detect(fixture("empty.csv")))
                .hasMessage("empty.csv: file is empty; expected a header row");
    }

    @Test
    void a_job_trace_summary_gives_jobs_gpu_histogram_durations_and_span() {
        assertThat(run(fixture("philly-small.csv").toString())).isZero();
        assertThat(out()).contains(
                "(philly)",
                "jobs: 3\n",
                "GPUs per job: 1: 1, 2: 1, 8: 1\n",
                "duration (s): min 1.500, p50 66, p90 2,951, p99 2,951, max 2,951, mean 1,006.2\n",
                "submissions: 0 s .. 86,400 s after the first (1.0 days)\n",
                "tenants: 2\n");
    }

    @Test
    void a_muri_summary_lists_the_models() {
        assertThat(run(fixture("muri-small.csv").toString())).isZero();
        assertThat(out()).contains("jobs: 3\n", "GPUs per job: 1: 1, 4: 1, 16: 1\n", "models: a2c: 1, bert: 1, vgg16: 1\n");
    }

    @Test
    void openb_summaries_count_hosts_gpus_by_model_and_pod_shapes() {
        assertThat(run(fixture("openb-nodes-small.csv").toString(), fixture("openb-pods-small.csv").toString())).isZero();
        assertThat(out()).contains(
                "hosts: 4, GPUs: 19, CPU cores: 288, memory GiB: 1,536\n",
                "GPUs by model: G2: 8, P100: 2, T4: 1, V100M32: 8\n",
                "pods: 4\n",
                "GPUs per pod (num_gpu): 0: 1, 1: 2, 8: 1\n",
                "GPU milli requested: 9,460\n");
    }

    @Test
    void a_malformed_file_is_reported_and_exits_1_while_lenient_mode_skips_it() {
        Path bad = write(dir, "philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:01:55,abc,1,66.0,c1", "2017-10-09 07:01:55,66,1,66.0,c1");
        assertThat(run(bad.toString())).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("error: philly.csv:2: column 'duration': 'abc' is not a number");

        assertThat(run("--lenient", bad.toString())).isZero();
        assertThat(out()).contains("jobs: 1\n", "skipped rows: 1 (first: philly.csv:2: column 'duration'");
    }

    @Test
    void no_arguments_print_usage_and_exit_2() {
        assertThat(run()).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("usage: TraceSummary");
    }

    @Test
    void the_percentile_is_the_value_at_floor_n_times_q_of_the_sorted_list() {
        long[] sorted = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
        assertThat(TraceSummary.percentile(sorted, 0.5)).isEqualTo(60);
        assertThat(TraceSummary.percentile(sorted, 0.99)).isEqualTo(100);
        assertThat(TraceSummary.percentile(sorted, 0.0)).isEqualTo(10);
        assertThat(TraceSummary.percentile(new long[] {7}, 0.99)).isEqualTo(7);
    }
}
