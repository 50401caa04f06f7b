package dev.gpucloud.scheduler.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.JobState;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JobRunTest {

    private static final long T = 1_700_000_000_000L;

    private static JobRun running(int gpus) {
        JobRun run = new JobRun("j", gpus * 1000, RetryPolicy.DEFAULT);
        run.scheduled("placed");
        run.started(T);
        return run;
    }

    @Test
    void anInterruptionRequeuesFromTheLatestCheckpointAndCountsTheLostWork() {
        JobRun run = running(8);
        run.checkpointSaved("s3://ckpt/step-100", T + 600_000);
        run.checkpointSaved("s3://ckpt/step-50", T + 300_000); // late, older: the newer time stays
        Transition t = run.interrupted("spot interruption on h1", T + 900_000);
        assertThat(t.from()).isEqualTo(JobState.RUNNING);
        assertThat(t.to()).isEqualTo(JobState.PENDING);
        assertThat(t.resumeFrom()).isEqualTo("s3://ckpt/step-50");
        assertThat(t.lostWorkSeconds()).isEqualTo(300);
        assertThat(t.lostGpuSeconds()).isEqualTo(2400);
        assertThat(run.interruptions()).isEqualTo(1);
        run.scheduled("placed again");
        assertThat(run.attempt()).isEqualTo(2);
    }

    @Test
    void everyEndedAttemptAddsItsRunTimesGpusToTheServiceItReceived() {
        JobRun run = running(4);
        assertThat(run.attainedGpuSeconds()).isZero();
        assertThat(run.requeuedAtMillis()).isEqualTo(Long.MIN_VALUE);
        run.interrupted("preempted", T + 100_000); // 100 s x 4 GPUs
        assertThat(run.attainedGpuSeconds()).isEqualTo(400);
        assertThat(run.requeuedAtMillis()).isEqualTo(T + 100_000);
        run.scheduled("placed again");
        run.interrupted("host lost before it started", T + 200_000); // never started: nothing more
        assertThat(run.attainedGpuSeconds()).isEqualTo(400);
        run.scheduled("placed again");
        run.started(T + 300_000);
        run.exited(1, T + 350_000); // a retried failure counts too: 50 s x 4
        assertThat(run.attainedGpuSeconds()).isEqualTo(600);
        assertThat(run.requeuedAtMillis()).isEqualTo(T + 350_000);
        JobRun restored = JobRun.restore("j", 4000, RetryPolicy.DEFAULT, JobState.PENDING, 3, 1, 2, null,
                Long.MIN_VALUE, Long.MIN_VALUE, 0, 0, run.attainedGpuSeconds(), run.requeuedAtMillis());
        assertThat(restored.attainedGpuSeconds()).isEqualTo(600);
        assertThat(restored.requeuedAtMillis()).isEqualTo(T + 350_000);
    }

    @Test
    void withoutACheckpointEverythingSinceTheStartIsLost() {
        JobRun run = running(2);
        Transition t = run.interrupted("host lost", T + 120_000);
        assertThat(t.lostWorkSeconds()).isEqualTo(120);
        assertThat(t.lostGpuSeconds()).isEqualTo(240);
        assertThat(t.resumeFrom()).isNull();
    }

    @Test
    void aRequestedCheckpointGoesThroughCheckpointingAndBack() {
        JobRun run = running(1);
        assertThat(run.checkpointRequested("preempted by high").to()).isEqualTo(JobState.CHECKPOINTING);
        Transition saved = run.checkpointSaved("/ckpt/1", T + 5000);
        assertThat(saved.from()).isEqualTo(JobState.CHECKPOINTING);
        assertThat(saved.to()).isEqualTo(JobState.RUNNING);
        assertThat(run.interrupted("preempted", T + 6000).lostWorkSeconds()).isEqualTo(1);
    }

    @ParameterizedTest(name = "exit {0} after {1} failures -> {2}")
    @CsvSource({
            "0, 0, SUCCEEDED",
            "1, 0, PENDING",
            "137, 2, PENDING",
            "1, 3, FAILED",
            "127, 0, FAILED",
            "126, 0, FAILED",
            "2, 0, FAILED"})
    void failuresRetryWithinTheBoundByExitCode(int exit, int failures, JobState expected) {
        JobRun run = JobRun.restore("j", 1000, RetryPolicy.DEFAULT, JobState.RUNNING, 1, failures, 0, null,
                Long.MIN_VALUE, T, 0, 0);
        assertThat(run.exited(exit, T + 1000).to()).isEqualTo(expected);
    }

    @Test
    void finalStatesNeverMove() {
        JobRun run = running(1);
        run.exited(0, T + 1);
        assertThatThrownBy(() -> run.interrupted("late", T + 2)).isInstanceOf(IllegalStateException.class)
                .hasMessage("job j cannot move from SUCCEEDED to PENDING");
        assertThatThrownBy(() -> run.cancelled("late", T + 2)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void lostWorkAddsUpOverStops() {
        JobRun run = running(4);
        run.interrupted("spot", T + 10_000);
        run.scheduled("again");
        run.started(T + 20_000);
        run.interrupted("spot", T + 50_000);
        assertThat(run.lostWorkSeconds()).isEqualTo(40);
        assertThat(run.lostGpuSeconds()).isEqualTo(160);
    }

    @Test
    void retryPolicyIsValidated() {
        assertThatThrownBy(() -> new RetryPolicy(-1, Set.of())).hasMessageContaining("maxRetries");
    }
}
