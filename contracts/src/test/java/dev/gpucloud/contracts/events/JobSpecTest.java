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

    static JobSpec withSecrets(Map<String, String> env, Map<String, String> secretEnv) {
        return new JobSpec("train", 1, 1, null, 0, 1000, 1024, List.of(), 0, Interconnect.NONE, null, null, null, 0,
                null, 0, List.of("sleep", "5"), env, secretEnv);
    }

    static Stream<Arguments> invalidSecrets() {
        return Stream.of(
                Arguments.of("a name that is not a variable name", Map.of(), Map.of("1X", "hunter2"),
                        "field 'spec.secretEnv' has an invalid name '1X'"),
                Arguments.of("an empty name", Map.of(), Map.of("", "hunter2"), "spec.secretEnv"),
                Arguments.of("a name also in env", Map.of("TOKEN", "x"), Map.of("TOKEN", "hunter2"),
                        "field 'spec.secretEnv' names 'TOKEN', which spec.env also sets"),
                Arguments.of("a value over 4096 characters", Map.of(), Map.of("TOKEN", "hunter2".repeat(600)),
                        "field 'spec.secretEnv[TOKEN]' holds 4200 characters, over the limit of 4096"),
                Arguments.of("a NUL in a value", Map.of(), Map.of("TOKEN", "hunter2\0"),
                        "field 'spec.secretEnv[TOKEN]' holds a NUL character"),
                Arguments.of("a value that looks sealed for an agent", Map.of(),
                        Map.of("TOKEN", "gpucloud:agent-sealed:v1:a1:hunter2"),
                        "field 'spec.secretEnv[TOKEN]' begins with 'gpucloud:agent-sealed:'"),
                Arguments.of("more than 32 secrets", Map.of(), many(33), "spec.secretEnv"));
    }

    private static Map<String, String> many(int n) {
        Map<String, String> secrets = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            secrets.put("S" + i, "hunter2");
        }
        return secrets;
    }

    @ParameterizedTest(name = "secret env with {0} is rejected")
    @MethodSource("invalidSecrets")
    void invalid_secret_env_names_what_is_wrong_and_never_quotes_the_value(String name, Map<String, String> env,
            Map<String, String> secretEnv, String message) {
        assertThatThrownBy(() -> withSecrets(env, secretEnv)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message).satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
    }

    @org.junit.jupiter.api.Test
    void a_spec_shows_its_secret_names_but_never_their_values() {
        JobSpec spec = withSecrets(Map.of("MODE", "fast"), Map.of("WANDB_API_KEY", "hunter2"));

        assertThat(spec.toString()).contains("WANDB_API_KEY=(secret)", "MODE=fast").doesNotContain("hunter2");
        assertThat(spec.redacted().secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", JobSpec.REDACTED));
        assertThat(spec.redacted().env()).containsExactly(Map.entry("MODE", "fast"));
        assertThat(spec.secretEnv()).containsExactly(Map.entry("WANDB_API_KEY", "hunter2"));
    }

    @org.junit.jupiter.api.Test
    void a_stored_spec_with_secrets_reads_back_with_them_and_one_without_reads_back_with_none() {
        JobSpec spec = withSecrets(Map.of(), Map.of("WANDB_API_KEY", "hunter2"));
        String json = EventCodec.encodeToString(spec);

        assertThat(EventCodec.decode("spec", JobSpec.class, json.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isEqualTo(spec);
        String old = json.replace(",\"secretEnv\":{\"WANDB_API_KEY\":\"hunter2\"}", "");
        assertThat(old).doesNotContain("secretEnv");
        assertThat(EventCodec.decode("spec", JobSpec.class, old.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .secretEnv()).isEmpty();
    }

    @org.junit.jupiter.api.Test
    void a_start_command_shows_its_secret_names_but_never_their_values() {
        NodeCommand start = Samples.nodeCommand().withSecretEnv(Map.of("WANDB_API_KEY", "hunter2"));

        assertThat(start.toString()).contains("WANDB_API_KEY=(secret)").doesNotContain("hunter2");
        assertThat(start.withEpoch(3).secretEnv()).containsEntry("WANDB_API_KEY", "hunter2");
    }
}
