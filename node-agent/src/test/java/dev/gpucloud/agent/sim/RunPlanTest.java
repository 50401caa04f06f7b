package dev.gpucloud.agent.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RunPlanTest {

    private static final Duration FALLBACK = Duration.ofSeconds(30);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("sleep N runs N seconds", List.of("sleep", "20"), Map.of(), 20_000L, 0),
                Arguments.of("sleep with a path", List.of("/bin/sleep", "5"), Map.of(), 5_000L, 0),
                Arguments.of("sleep with fractions", List.of("sleep", "2.5"), Map.of(), 2_500L, 0),
                Arguments.of("sleep in minutes", List.of("sleep", "2m"), Map.of(), 120_000L, 0),
                Arguments.of("sleep wins over the env", List.of("sleep", "7"), Map.of("GPUCLOUD_SIM_SECONDS", "9"), 7_000L, 0),
                Arguments.of("env when the command is not sleep", List.of("python", "train.py"),
                        Map.of("GPUCLOUD_SIM_SECONDS", "9"), 9_000L, 0),
                Arguments.of("env when sleep has no number", List.of("sleep", "forever"),
                        Map.of("GPUCLOUD_SIM_SECONDS", "4"), 4_000L, 0),
                Arguments.of("default without either", List.of("python", "train.py"), Map.of(), 30_000L, 0),
                Arguments.of("default for an empty command", List.of(), Map.of(), 30_000L, 0),
                Arguments.of("negative sleep is ignored", List.of("sleep", "-3"), Map.of(), 30_000L, 0),
                Arguments.of("huge sleep is capped at a year", List.of("sleep", "1e12"), Map.of(), 365L * 86_400_000, 0),
                Arguments.of("exit code from the env", List.of("sleep", "1"), Map.of("GPUCLOUD_SIM_EXIT_CODE", "3"), 1_000L, 3),
                Arguments.of("unreadable exit code means 0", List.of("sleep", "1"), Map.of("GPUCLOUD_SIM_EXIT_CODE", "x"),
                        1_000L, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void readsDurationAndExitCode(String name, List<String> command, Map<String, String> env, long millis, int exitCode) {
        RunPlan plan = RunPlan.of(command, env, FALLBACK);
        assertThat(plan.duration()).isEqualTo(Duration.ofMillis(millis));
        assertThat(plan.exitCode()).isEqualTo(exitCode);
    }
}
