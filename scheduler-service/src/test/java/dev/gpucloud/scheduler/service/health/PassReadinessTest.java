package dev.gpucloud.scheduler.service.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.scheduler.service.engine.SchedulerEngine.PassProgress;
import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: the stall rule is a plain function of the passes' progress. */
class PassReadinessTest {

    private static final long AFTER = 60_000;

    @Test
    void readyWhilePassesCompleteOrNothingWaits() {
        assertThat(PassReadiness.stalled(new PassProgress(100_000, 5, null), 150_000, AFTER)).isFalse();
        assertThat(PassReadiness.stalled(new PassProgress(0, 0, null), 1_000_000, AFTER))
                .as("an idle scheduler runs no pass and is still ready").isFalse();
    }

    @Test
    void downWhenJobsWaitAndNoPassCompletedForTooLong() {
        assertThat(PassReadiness.stalled(new PassProgress(100_000, 1, "IllegalStateException: boom"), 160_001, AFTER))
                .isTrue();
        assertThat(PassReadiness.stalled(new PassProgress(100_000, 1, null), 160_000, AFTER)).as("at the bound")
                .isFalse();
    }
}
