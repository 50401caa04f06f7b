package dev.gpucloud.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class JobSpecTest {

    /** A builder over the sample spec so each case changes one thing. */
    record Spec(String name, int workers, int gpus, String mig, int milli, List<String> command,
            Map<String, String> env, Interconnect interconnect) {
        static Spec valid() {
            return new Spec("train", 1, 1, null, 0, List.of("sleep", "5"), Map.of(), Interconnect.NONE);
        }

        JobSpec build() {
            return new JobSpec(name, workers, gpus, mig, milli, 1000, 1024, List.of(), 0, interconnect, null, null,
                    null, 0, null, 0, command, env);
        }
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of("no name", (UnaryOperator<Spec>) s -> new Spec(" ", 1, 1, null, 0, s.command(), s.env(), s.interconnect()), "spec.name"),
                Arguments.of("zero workers", (UnaryOperator<Spec>) s -> new Spec("x", 0, 1, null, 0, s.command(), s.env(), s.interconnect()), "spec.workers"),
                Arguments.of("too many workers", (UnaryOperator<Spec>) s -> new Spec("x", 5000, 1, null, 0, s.command(), s.env(), s.interconnect()), "spec.workers"),
                Arguments.of("no GPU shape", (UnaryOperator<Spec>) s -> new Spec("x", 1, 0, null, 0, s.command(), s.env(), s.interconnect()), "spec.gpusPerWorker"),
                Arguments.of("two GPU shapes", (UnaryOperator<Spec>) s -> new Spec("x", 1, 1, "1g.10gb", 0, s.command(), s.env(), s.interconnect()), "spec.gpusPerWorker"),
                Arguments.of("bad MIG profile", (UnaryOperator<Spec>) s -> new Spec("x", 1, 0, "9g.big", 0, s.command(), s.env(), s.interconnect()), "spec.migProfile"),
                Arguments.of("whole GPU as a fraction", (UnaryOperator<Spec>) s -> new Spec("x", 1, 0, null, 1000, s.command(), s.env(), s.interconnect()), "spec.milliGpu"),
                Arguments.of("no command", (UnaryOperator<Spec>) s -> new Spec("x", 1, 1, null, 0, List.of(), s.env(), s.interconnect()), "spec.command"),
                Arguments.of("NUL in an argument", (UnaryOperator<Spec>) s -> new Spec("x", 1, 1, null, 0, List.of("a\0b"), s.env(), s.interconnect()), "spec.command"),
                Arguments.of("bad env name", (UnaryOperator<Spec>) s -> new Spec("x", 1, 1, null, 0, s.command(), Map.of("1X", "y"), s.interconnect()), "spec.env"),
                Arguments.of("NVLink for one GPU", (UnaryOperator<Spec>) s -> new Spec("x", 1, 1, null, 0, s.command(), s.env(), Interconnect.NVLINK), "spec.interconnect"));
    }

    @ParameterizedTest(name = "{0} is rejected naming {2}")
    @MethodSource("invalid")
    void invalid_spec_names_the_field(String name, UnaryOperator<Spec> change, String field) {
        Spec spec = change.apply(Spec.valid());

        assertThatThrownBy(spec::build).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(field);
    }

    @org.junit.jupiter.api.Test
    void absent_options_take_their_defaults() {
        JobSpec spec = Spec.valid().build();

        assertThat(spec.capacity()).isEqualTo(CapacityPreference.ON_DEMAND);
        assertThat(spec.priority()).isEqualTo(PriorityClass.NORMAL);
        assertThat(spec.checkpoint()).isEqualTo(CheckpointPolicy.NONE);
        assertThat(spec.milliGpusPerWorker()).isEqualTo(1000);
    }

    @org.junit.jupiter.api.Test
    void a_media_extensions_mig_profile_is_a_shape() {
        Spec spec = Spec.valid();
        JobSpec job = new Spec("x", 1, 0, "1g.10gb+me", 0, spec.command(), spec.env(), spec.interconnect()).build();

        assertThat(job.migProfile()).isEqualTo("1g.10gb+me");
    }
}
