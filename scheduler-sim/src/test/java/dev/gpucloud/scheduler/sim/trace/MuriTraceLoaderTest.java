package dev.gpucloud.scheduler.sim.trace;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MuriTraceLoaderTest {

    private static final String HEADER = "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,"
            + "interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority";
    private static final String GOOD = "7,1,1000,100,dqn,128,49000,6000,490,446,8,0,0";

    @TempDir
    Path dir;

    @Test
    void times_in_the_file_are_milliseconds_and_convert_exactly_to_seconds() {
        List<TraceJob> jobs = MuriTraceLoader.load(fixture("muri-small.csv")).items();

        assertThat(jobs).extracting(TraceJob::id).containsExactly("0", "2", "1");
        TraceJob a2c = jobs.get(2);
        assertThat(a2c.submitMillis()).isEqualTo(27_069_000);
        assertThat(a2c.submitSeconds()).isEqualTo(27_069.0);
        assertThat(a2c.durationMillis()).isEqualTo(2_683_606_000L);
        assertThat(a2c.durationSeconds()).isEqualTo(2_683_606.0);
        TraceJob bert = jobs.get(1);
        assertThat(bert.submitMillis()).isEqualTo(6_500);
        assertThat(bert.submitSeconds()).isEqualTo(6.5);
    }

    @Test
    void the_training_profile_keeps_model_iterations_iteration_time_and_priority() {
        TraceJob vgg = MuriTraceLoader.load(fixture("muri-small.csv")).items().get(0);

        assertThat(vgg.gpus()).isEqualTo(16);
        assertThat(vgg.tenant()).isEqualTo(TraceJob.NO_TENANT);
        assertThat(vgg.training()).isEqualTo(new TrainingProfile("vgg16", 16, 4_378_042, 332, 3_840_000,
                List.of(83.0, 68.0, 110.0), 0));
    }

    @Test
    void fractional_resource_times_are_kept() {
        TraceJob bert = MuriTraceLoader.load(fixture("muri-small.csv")).items().get(1);
        assertThat(bert.training().resourceTimesMillis()).containsExactly(0.5, 166.0, 86.0);
        assertThat(bert.training().priority()).isEqualTo(1);
    }

    @Test
    void submit_times_count_from_the_earliest_submission() {
        Path file = write(dir, "muri.csv", HEADER, "1,1,5000,100,dqn,128,49000,6000,490,446,8,0,0", GOOD);
        assertThat(MuriTraceLoader.load(file).items())
                .extracting(TraceJob::id, TraceJob::submitMillis)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("7", 0L), org.assertj.core.groups.Tuple.tuple("1", 4000L));
    }

    static Stream<Arguments> malformedRows() {
        return Stream.of(
                Arguments.of("submit_time is fractional", "7,1,1000.5,100,dqn,128,49000,6000,490,446,8,0,0",
                        "muri.csv:2: column 'submit_time': '1000.5' is not a whole number"),
                Arguments.of("submit_time is negative", "7,1,-1,100,dqn,128,49000,6000,490,446,8,0,0",
                        "muri.csv:2: column 'submit_time': '-1' is out of range (must be at least 0)"),
                Arguments.of("num_gpu is zero", "7,0,1000,100,dqn,128,49000,6000,490,446,8,0,0",
                        "muri.csv:2: column 'num_gpu': '0' is out of range (must be within 1..1000000)"),
                Arguments.of("duration is text", "7,1,1000,100,dqn,128,long,6000,490,446,8,0,0",
                        "muri.csv:2: column 'duration': 'long' is not a number"),
                Arguments.of("model_name is empty", "7,1,1000,100,,128,49000,6000,490,446,8,0,0",
                        "muri.csv:2: column 'model_name': is empty"),
                Arguments.of("resource time is negative", "7,1,1000,100,dqn,128,49000,6000,490,446,-8,0,0",
                        "muri.csv:2: column 'resource_time_1': '-8' is out of range (must be at least 0)"),
                Arguments.of("priority is text", "7,1,1000,100,dqn,128,49000,6000,490,446,8,0,high",
                        "muri.csv:2: column 'priority': 'high' is not a number"),
                Arguments.of("a field is missing", "7,1,1000,100,dqn,128,49000,6000,490,446,8,0",
                        "muri.csv:2: row has 12 fields, the header has 13"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedRows")
    void a_malformed_row_stops_the_load_naming_file_line_and_column(String name, String row, String message) {
        Path file = write(dir, "muri.csv", HEADER, GOOD.replace("7,", "8,"), row);
        assertThatThrownBy(() -> MuriTraceLoader.load(file))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage(message.replace("muri.csv:2:", "muri.csv:3:"));
    }

    @Test
    void a_repeated_job_id_is_an_error_naming_the_first_line() {
        Path file = write(dir, "muri.csv", HEADER, GOOD, GOOD);
        assertThatThrownBy(() -> MuriTraceLoader.load(file))
                .hasMessage("muri.csv:3: column 'job_id': '7' repeats the job of line 2");
    }

    @Test
    void lenient_loading_skips_and_counts_malformed_rows() {
        Path file = write(dir, "muri.csv", HEADER, GOOD, "8,0,1000,100,dqn,128,49000,6000,490,446,8,0,0", GOOD);
        Loaded<TraceJob> trace = MuriTraceLoader.load(file, ErrorMode.LENIENT);
        assertThat(trace.items()).extracting(TraceJob::id).containsExactly("7");
        assertThat(trace.skippedRows()).isEqualTo(2);
        assertThat(trace.problems()).containsExactly(
                "muri.csv:3: column 'num_gpu': '0' is out of range (must be within 1..1000000)",
                "muri.csv:4: column 'job_id': '7' repeats the job of line 2");
    }

    @Test
    void a_header_only_file_is_a_trace_of_no_jobs() {
        assertThat(MuriTraceLoader.load(write(dir, "muri.csv", HEADER)).items()).isEmpty();
    }

    @Test
    void an_empty_file_fails() {
        assertThatThrownBy(() -> MuriTraceLoader.load(fixture("empty.csv")))
                .hasMessageStartingWith("empty.csv: file is empty; expected a header row with columns job_id, num_gpu");
    }

    @Test
    void a_missing_file_fails() {
        assertThatThrownBy(() -> MuriTraceLoader.load(dir.resolve("trace9.csv")))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("trace9.csv: no such file");
    }
}
