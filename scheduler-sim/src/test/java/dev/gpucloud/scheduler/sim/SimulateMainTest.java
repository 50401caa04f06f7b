package dev.gpucloud.scheduler.sim;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SimulateMainTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return new SimulateMain(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)).run(args);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void simulate_elastic_hands_over_to_the_elastic_command() {
        assertThat(run("elastic", "--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("gpucloud simulate elastic");
    }

    @Test
    void a_muri_trace_runs_and_writes_csv_files_charts_and_a_summary_table() throws Exception {
        int rc = run("--trace", fixture("muri-small.csv").toString(), "--policy", "srtf,production", "--out",
                dir.toString(), "--no-progress");
        assertThat(rc).as(err()).isZero();
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("avg_jct_s").contains("srtf").contains("production");
        assertThat(dir.resolve("muri-small-srtf.jobs.csv.gz")).exists();
        assertThat(dir.resolve("muri-small-srtf.utilization.csv")).exists();
        assertThat(Files.readAllLines(dir.resolve("muri-small-summary.csv"))).hasSize(3);
        assertThat(Files.readString(dir.resolve("muri-small-jct-cdf.svg"))).contains("--policy srtf,production");
        assertThat(dir.resolve("muri-small-utilization.svg")).exists();
    }

    @Test
    void a_fleet_run_compares_spot_with_all_on_demand() throws Exception {
        int rc = run("--trace", fixture("philly-small.csv").toString(), "--cluster", fixture("fleet-small.csv").toString(),
                "--policy", "fifo", "--spot-rate", "0.5", "--checkpoint-interval", "1800", "--compare-on-demand",
                "--out", dir.toString(), "--no-progress");
        assertThat(rc).as(err()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("saving_pct");
        assertThat(dir.resolve("philly-small-spot-vs-on-demand.csv")).exists();
        assertThat(dir.resolve("philly-small-cost.svg")).exists();
    }

    @Test
    void an_openb_pod_list_runs_the_packing_protocol() {
        int rc = run("--trace", fixture("openb-pods-small.csv").toString(), "--nodes",
                fixture("openb-nodes-small.csv").toString(), "--seeds", "42..43", "--out", dir.toString(), "--no-progress");
        assertThat(rc).as(err()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("fgd").contains("bestfit").contains("random");
        assertThat(dir.resolve("openb-pods-small-allocation.svg")).exists();
    }

    @Test
    void an_openb_gpu_sharing_variant_runs_under_its_own_name() {
        int rc = run("--trace", fixture("openb-pods-small.csv").toString(), "--nodes",
                fixture("openb-nodes-small.csv").toString(), "--gpu-share", "60", "--seed", "42", "--out",
                dir.toString(), "--no-progress");
        assertThat(rc).as(err()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("gpushare60");
        assertThat(dir.resolve("openb-pods-small-gpushare60-allocation.svg")).exists();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "--policy fifo | --trace is required",
            "--trace x --bogus | Unknown option: '--bogus'",
            "--trace | Missing required parameter for option '--trace' (TRACE)",
            "--trace no-such-trace | no such file 'no-such-trace'",
            "--trace MURI --policy lottery | unknown policy 'lottery'",
            "--trace MURI --restore-cost -5 | --restore-cost: -5 must be a finite number >= 0",
            "--trace MURI --spot-rate abc | --spot-rate: 'abc' is not a number",
            "--trace MURI --seeds 9..3 | --seeds: 9..3 must be A..B",
            "--trace MURI --seed 1 --seeds 1..2 | give --seed or --seeds, not both",
            "--trace MURI --cluster nowhere.csv | --cluster: 'nowhere.csv' is neither muri nor an existing fleet spec",
            "--trace NODES | is an openb node list",
            "--trace PODS --nodes NODES --gpu-share 150 | --gpu-share: 150 must be a whole percentage 0..100",
            "--trace PODS --nodes NODES --gpu-share 12.5 | --gpu-share: 12.5 must be a whole percentage 0..100",
            "--trace MURI --half middle | --half: 'middle' is neither first nor second",
            "--trace MURI --las first | --las: 'first' is not KEY=NUMBER",
            "--trace MURI --las first=abc | --las: 'first=abc' is not KEY=NUMBER",
            "--trace MURI --las speed=2 | --las: unknown key 'speed'",
            "--trace MURI --las factor=1 | --las: LAS needs a first limit > 0, a factor > 1",
    })
    void bad_usage_exits_2_naming_what_is_wrong(String args, String message) {
        String muri = fixture("muri-small.csv").toString();
        String nodes = fixture("openb-nodes-small.csv").toString();
        String pods = fixture("openb-pods-small.csv").toString();
        String[] argv = args.strip().replace("MURI", muri).replace("NODES", nodes).replace("PODS", pods)
                .split(" +");
        assertThat(run(argv)).isEqualTo(2);
        assertThat(err()).contains(message);
    }

    @Test
    void a_malformed_trace_exits_1_with_line_and_column() {
        Path bad = write(dir, "bad.csv", "timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:01:55,abc,1,66.0,c1");
        assertThat(run("--trace", bad.toString(), "--cluster", fixture("fleet-small.csv").toString(), "--no-progress"))
                .isEqualTo(1);
        assertThat(err()).contains("bad.csv:2: column 'duration': 'abc' is not a number");
    }

    @Test
    void a_job_bigger_than_the_cluster_exits_1_naming_it() {
        Path big = write(dir, "big.csv", "timestamp,duration,num_gpus,gpu_time,cluster",
                "2017-10-09 07:01:55,10,128,1280,c1");
        assertThat(run("--trace", big.toString(), "--cluster", fixture("fleet-small.csv").toString(), "--no-progress"))
                .isEqualTo(1);
        assertThat(err()).contains("needs 128 GPUs");
    }

    @Test
    void a_half_of_the_trace_runs_under_its_own_name() {
        int rc = run("--trace", fixture("muri-small.csv").toString(), "--half", "second", "--policy", "production",
                "--las", "first=100,min-run=0", "--out", dir.toString(), "--no-progress", "--no-job-csv");
        assertThat(rc).as(err()).isZero();
        assertThat(dir.resolve("muri-small-second-half-summary.csv")).exists();
    }

    @Test
    void help_prints_usage() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("Usage: gpucloud simulate --trace TRACE [options]").contains("--compare-on-demand")
                .contains("% of the cluster's GPU milli").doesNotContain("%%");
    }
}
