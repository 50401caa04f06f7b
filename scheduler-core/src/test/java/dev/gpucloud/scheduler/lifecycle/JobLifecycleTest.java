package dev.gpucloud.scheduler.lifecycle;

import static dev.gpucloud.contracts.events.JobState.CANCELLED;
import static dev.gpucloud.contracts.events.JobState.FAILED;
import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SCHEDULED;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.JobState;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class JobLifecycleTest {

    static Stream<Arguments> moves() {
        return Stream.of(
                Arguments.of(PENDING, SCHEDULED, true),
                Arguments.of(SCHEDULED, RUNNING, true),
                Arguments.of(RUNNING, SUCCEEDED, true),
                Arguments.of(RUNNING, PENDING, true),
                Arguments.of(PENDING, RUNNING, false),
                Arguments.of(SUCCEEDED, RUNNING, false),
                Arguments.of(CANCELLED, PENDING, false),
                Arguments.of(FAILED, SCHEDULED, false));
    }

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @MethodSource("moves")
    void legal_moves(JobState from, JobState to, boolean legal) {
        assertThat(JobLifecycle.canMove(from, to)).isEqualTo(legal);
        if (!legal) {
            assertThatThrownBy(() -> JobLifecycle.move("job-1", from, to)).hasMessageContaining("job-1 cannot move");
        }
    }

    static Stream<Arguments> gangs() {
        return Stream.of(
                Arguments.of("one of two started", SCHEDULED, 2, 1, 0, 0, SCHEDULED),
                Arguments.of("all started", SCHEDULED, 2, 2, 0, 0, RUNNING),
                Arguments.of("one exited before the other started", SCHEDULED, 2, 1, 1, 0, RUNNING),
                Arguments.of("all exited cleanly", RUNNING, 2, 0, 2, 0, SUCCEEDED),
                Arguments.of("one failed", RUNNING, 2, 1, 0, 1, FAILED),
                Arguments.of("cancelled stays cancelled", CANCELLED, 2, 0, 2, 0, CANCELLED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("gangs")
    void gang_state_follows_its_workers(String name, JobState current, int workers, int started, int ok, int failed,
            JobState expected) {
        assertThat(JobLifecycle.gangState(current, workers, started, ok, failed)).isEqualTo(expected);
    }
}
