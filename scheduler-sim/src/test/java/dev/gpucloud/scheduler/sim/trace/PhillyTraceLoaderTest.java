package dev.gpucloud.scheduler.sim.trace;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PhillyTraceLoaderTest {

    private static final String HEADER = "timestamp,duration,num_gpus,gpu_time,cluster";

    @TempDir
    Path dir;

    @Test
    void submit_times_count_from_the_earliest_submission_and_jobs_come_in_submit_order() {
        Loaded<TraceJob> trace = PhillyTraceLoader.load(fixture("philly-small.csv"));

        assertThat(trace.items()).containsExactly(
                TraceJob.of("3", 0, 2_951_000, 2, "6214e9"),
                TraceJob.of("2", 2_932_000, 66_000, 1, "11cb48"),
                TraceJob.of("4", 86_400_000, 1_500, 8, "11cb48"));
        assertThat(trace.skippedRows()).isZero();
        assertThat(trace.file()).isEqualTo("philly-small.csv");
    }

    @Test
    void seconds_read_back_as_the_trace_wrote_them() {
        TraceJob job = PhillyTraceLoader.load(fixture("philly-small.csv")).items().get(1);
        assertThat(job.submitSeconds()).isEqualTo(2932.0);
        assertThat(job.durationSeconds()).isEqualTo(66.0);
        assertThat(job.gpuSeconds()).isEqualTo(66.0);
        assertThat(job.hasTraining()).isFalse();
    }

    static Stream<Arguments> malformedRows() {
        return Stream.of(
                Arguments.of("duration is not a number", "2017-10-09 07:01:55,abc,1,66.0,c1",
                        "philly.csv:2: column 'duration': 'abc' is not a number"),
                Arguments.of("duration is empty", "2017-10-09 07:01:55,,1,66.0,c1",
                        "philly.csv:2: column 'duration': is empty, expected a number"),
                Arguments.of("duration is zero", "2017-10-09 07:01:55,0,1,0,c1",
                        "philly.csv:2: column 'duration': '0' is out of range (must be at least 1)"),
                Arguments.of("duration is negative", "2017-10-09 07:01:55,-5,1,-5,c1",
                        "philly.csv:2: column 'duration': '-5' is out of range (must be at least 1)"),
                Arguments.of("num_gpus is fractional", "2017-10-09 07:01:55,66,1.5,99,c1",
                        "philly.csv:2: column 'num_gpus': '1.5' is not a whole number"),
                Arguments.of("num_gpus is zero", "2017-10-09 07:01:55,66,0,0,c1",
                        "philly.csv:2: column 'num_gpus': '0' is out of range (must be within 1..1000000)"),
                Arguments.of("timestamp has no time", "2017-10-09,66,1,66,c1",
                        "philly.csv:2: column 'timestamp': '2017-10-09' is not a time like 2017-10-09 07:01:55"),
                Arguments.of("timestamp month 13", "2017-13-09 07:01:55,66,1,66,c1",
                        "philly.csv:2: column 'timestamp': '2017-13-09 07:01:55' is not a time like 2017-10-09 07:01:55"),
                Arguments.of("gpu_time disagrees", "2017-10-09 07:01:55,66,2,66,c1",
                        "philly.csv:2: column 'gpu_time': '66' is not duration x num_gpus (132)"),
                Arguments.of("cluster is empty", "2017-10-09 07:01:55,66,1,66, ",
                        "philly.csv:2: column 'cluster': is empty"),
                Arguments.of("a field is missing", "2017-10-09 07:01:55,66,1,66",
                        "philly.csv:2: row has 4 fields, the header has 5"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRows")
    void a_malformed_row_stops_the_load_naming_file_line_and_column(String name, String row, String message) {
        Path file = write(dir, "philly.csv", HEADER, row);
        assertThatThrownBy(() -> PhillyTraceLoader.load(file))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage(message);
    }

    @Test
    void the_line_number_counts_the_header_and_blank_lines() {
        Path file = write(dir, "philly.csv", HEADER, "2017-10-09 07:01:55,66,1,66,c1", "",
                "2017-10-09 07:01:55,66,x,66,c1");
        assertThatThrownBy(() -> PhillyTraceLoader.load(file))
                .isInstanceOfSatisfying(TraceFormatException.class, e -> {
                    assertThat(e.line()).isEqualTo(4);
                    assertThat(e.column()).isEqualTo("num_gpus");
                    assertThat(e.problem()).isEqualTo("'x' is not a number");
                });
    }

    @Test
    void lenient_loading_skips_and_counts_malformed_rows_and_ids_stay_line_numbers() {
        Path file = write(dir, "philly.csv", HEADER,
                "2017-10-09 07:00:00,abc,1,66,c1",
                "2017-10-09 07:00:10,10,1,10,c1",
                "2017-10-09 07:00:20,20,0,0,c1",
                "2017-10-09 07:00:30,30,2,60,c2");
        Loaded<TraceJob> trace = PhillyTraceLoader.load(file, ErrorMode.LENIENT);

        assertThat(trace.items()).containsExactly(
                TraceJob.of("3", 0, 10_000, 1, "c1"),
                TraceJob.of("5", 20_000, 30_000, 2, "c2"));
        assertThat(trace.skippedRows()).isEqualTo(2);
        assertThat(trace.problems()).containsExactly(
                "philly.csv:2: column 'duration': 'abc' is not a number",
                "philly.csv:4: column 'num_gpus': '0' is out of range (must be within 1..1000000)");
    }

    @Test
    void a_header_only_file_is_a_trace_of_no_jobs() {
        assertThat(PhillyTraceLoader.load(fixture("philly-header-only.csv")).items()).isEmpty();
    }

    @Test
    void an_empty_file_fails() {
        assertThatThrownBy(() -> PhillyTraceLoader.load(fixture("empty.csv")))
                .hasMessage("empty.csv: file is empty; expected a header row with columns "
                        + "timestamp, duration, num_gpus, gpu_time, cluster");
    }

    @Test
    void a_missing_file_fails() {
        assertThatThrownBy(() -> PhillyTraceLoader.load(dir.resolve("philly.csv"), ErrorMode.LENIENT))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("philly.csv: no such file");
    }

    @Test
    void a_muri_file_is_not_a_philly_list() {
        assertThatThrownBy(() -> PhillyTraceLoader.load(fixture("muri-small.csv")))
                .hasMessageStartingWith("muri-small.csv:1: column 'timestamp': missing from the header");
    }
}
