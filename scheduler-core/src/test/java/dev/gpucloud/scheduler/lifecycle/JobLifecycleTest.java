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
}
