package dev.gpucloud.scheduler.sim.elastic;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ElasticMainTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return new ElasticMain(new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)).run(args);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void both_halves_run_and_write_a_table_a_summary_time_series_and_charts() throws Exception {
        int rc = run("--trace", fixture("elastic-small.csv").toString(), "--boot-delay", "60s", "--idle-timeout",
                "10m", "--out", dir.toString());
        assertThat(rc).as(err()).isZero();
        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(table).contains("elastic-small-first").contains("elastic-small-second").contains("static-peak")
                .contains("static-mean").contains("less than the peak fleet");
        assertThat(Files.readAllLines(dir.resolve("elastic-small-elastic-summary.csv"))).hasSize(2 + 6);
        assertThat(Files.readAllLines(dir.resolve("elastic-small-first-elastic.timeseries.csv")).get(1))
                .isEqualTo(TimeSeries.HEADER);
        assertThat(Files.readString(dir.resolve("elastic-small-second-elastic.svg"))).contains("<path")
                .contains("--idle-timeout 10m");
    }

    @Test
    void a_malformed_row_names_the_file_and_line() {
        int rc = run("--trace", fixture("elastic-bad-row.csv").toString(), "--out", dir.toString());
        assertThat(rc).isEqualTo(1);
        assertThat(err()).contains("elastic-bad-row.csv:3").contains("duration");
    }

    @Test
    void a_bad_duration_is_a_usage_error() {
        int rc = run("--trace", fixture("elastic-small.csv").toString(), "--boot-delay", "soon");
        assertThat(rc).isEqualTo(2);
        assertThat(err()).contains("--boot-delay").contains("not a duration");
    }
}
