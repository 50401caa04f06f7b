package dev.gpucloud.scheduler.state;

import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SCHEDULED;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase.EXITED;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase.LOST;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase.STARTING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.WorkerCommands.Resend;
import dev.gpucloud.scheduler.state.WorkerCommands.Start;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The rules for a job's workers, as tables: from an allocation's row and its host's news, to the row. */
class WorkerCommandsTest {

    private static final Instant AT = Instant.ofEpochMilli(150_000);
    private static final long NOW = 200_000;

    /** Worker 0 of attempt 1 of job-a on n1, GPU 3, in {@code phase}. */
    static AllocationRow worker(Phase phase) {
        return new AllocationRow("job-a-a1-r0", "job-a", 1, 0, "n1", List.of(3), null, -1, 1000, 0, 0,
                Instant.ofEpochMilli(100_000), phase, phase == EXITED ? 0 : null, null,
                phase == STARTING ? null : Instant.ofEpochMilli(110_000), phase.ordinal() > 1 ? AT : null);
    }

    static AllocationRow migWorker() {
        return new AllocationRow("job-m-a1-r0", "job-m", 1, 0, "n1", List.of(0), "1g.10gb", 4, 1000, 0, 0,
                Instant.ofEpochMilli(100_000), STARTING, null, null, null, null);
    }

    static JobRow job(JobState state, int attempt) {
        JobRun run = JobRun.restore("job-a", 1000, new RetryPolicy(2, Set.of()), state, attempt, 0, 0, null,
                Long.MIN_VALUE, Long.MIN_VALUE, 0, 0);
        return new JobRow("tenant-a", 1, run, "", null, null);
    }

    static Stream<Arguments> starts() {
        return Stream.of(
                Arguments.of("a starting worker runs", STARTING, Start.STARTED, Phase.RUNNING),
                Arguments.of("a repeat changes nothing but is replayed", Phase.RUNNING, Start.REPEAT, Phase.RUNNING),
                Arguments.of("news of a worker that exited is ignored", EXITED, Start.IGNORED, EXITED),
                Arguments.of("news of a worker that was lost is ignored", LOST, Start.IGNORED, LOST));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("starts")
    void aStartedReport(String what, Phase before, Start result, Phase after) {
        AllocationRow a = worker(before);
        Instant startedBefore = a.startedAt();

        assertThat(WorkerCommands.started(a, AT, null)).isEqualTo(result);
        assertThat(a.phase()).isEqualTo(after);
        assertThat(a.startedAt()).isEqualTo(result == Start.STARTED ? AT : startedBefore);
    }

    static Stream<Arguments> ends() {
        return Stream.of(
                Arguments.of("a running worker exits with its code", Phase.RUNNING, false, 3, true, EXITED, 3),
                Arguments.of("a starting worker is lost, with no exit code", STARTING, true, 3, true, LOST, null),
                Arguments.of("an exit without a code keeps none", Phase.RUNNING, false, null, true, EXITED, null),
                Arguments.of("a repeat of an exit changes nothing", EXITED, false, 1, false, EXITED, 0),
                Arguments.of("a loss after the exit changes nothing", EXITED, true, null, false, EXITED, 0),
                Arguments.of("an exit after the loss changes nothing", LOST, false, 0, false, LOST, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ends")
    void anEnd(String what, Phase before, boolean lost, Integer code, boolean endedNow, Phase after, Integer exitCode) {
        AllocationRow a = worker(before);

        assertThat(WorkerCommands.ended(a, lost, code, Instant.ofEpochMilli(NOW))).isEqualTo(endedNow);
        assertThat(a.phase()).isEqualTo(after);
        assertThat(a.exitCode()).isEqualTo(exitCode);
        assertThat(a.isActive()).isFalse();
        assertThat(a.record("t")).isEqualTo(new AllocationRecord.Released("job-a-a1-r0"));
        if (endedNow) {
            assertThat(a.endedAt()).isEqualTo(Instant.ofEpochMilli(NOW));
        }
    }

    static Stream<Arguments> lateStarts() {
        return Stream.of(
                Arguments.of("still held: sent again", job(SCHEDULED, 1), worker(STARTING), NOW + 30_000L, Resend.YES),
                Arguments.of("the host unknown: sent again without a time", job(SCHEDULED, 1), worker(STARTING), null,
                        Resend.YES),
                Arguments.of("the new time passed already: liveness decides", job(SCHEDULED, 1), worker(STARTING), NOW,
                        Resend.TOO_LATE),
                Arguments.of("it started meanwhile", job(RUNNING, 1), worker(Phase.RUNNING), NOW + 30_000L, Resend.NO),
                Arguments.of("it was lost meanwhile", job(SCHEDULED, 1), worker(LOST), NOW + 30_000L, Resend.NO),
                Arguments.of("its job moved to a new attempt", job(SCHEDULED, 2), worker(STARTING), NOW + 30_000L,
                        Resend.NO),
                Arguments.of("its job went back to the queue", job(PENDING, 1), worker(STARTING), NOW + 30_000L,
                        Resend.NO),
                Arguments.of("its job ended", job(SUCCEEDED, 1), worker(STARTING), NOW + 30_000L, Resend.NO));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lateStarts")
    void aStartThatCameLate(String what, JobRow job, AllocationRow a, Long newStartBy, Resend expected) {
        assertThat(WorkerCommands.startAgain(job, a, newStartBy, NOW)).isEqualTo(expected);
    }

    @Test
    void aMigWorkerKeepsTheInstanceItsAgentNamed() {
        AllocationRow a = migWorker();
        assertThat(a.migInstance()).as("before STARTED: the slot chosen").isEqualTo("1g.10gb@4");

        WorkerCommands.started(a, AT, "MIG-1234");

        assertThat(a.migInstance()).isEqualTo("MIG-1234");
        assertThat(a.migSlot()).as("the START names the slot, always").isEqualTo("1g.10gb@4");
        assertThat(a.assignment("t").milliGpu()).as("a MIG slice holds no fraction").isZero();
    }

    @Test
    void aWholeGpuWorkerIgnoresAMigInstance() {
        AllocationRow a = worker(STARTING);

        WorkerCommands.started(a, AT, "MIG-1234");

        assertThat(a.migUuid()).isNull();
        assertThat(a.record("t")).isEqualTo(new AllocationRecord.Held(a.assignment("t"), true));
    }

    @Test
    void aPlacementStartsANewAttemptWithItsWorkersStarting() {
        JobRow job = job(PENDING, 1);
        List<Assignment> assignments = List.of(
                Assignment.whole("job-a-a2-r0", "job-a", "tenant-a", 0, "n1", List.of(0, 1), 0, 0),
                Assignment.whole("job-a-a2-r1", "job-a", "tenant-a", 1, "n2", List.of(4, 5), 0, 0),
                new Assignment("job-a-a2-r2", "job-a", "tenant-a", 2, "n2", List.of(6), null, -1, 250, 0, 0));

        List<AllocationRow> rows = WorkerCommands.placed(job, assignments, false, Instant.ofEpochMilli(NOW));

        assertThat(job.state()).isEqualTo(SCHEDULED);
        assertThat(job.run().attempt()).isEqualTo(2);
        assertThat(job.reason()).isEqualTo("placed on n1 GPUs [0,1], n2 GPUs [4,5], n2 GPU 6 (250 milli)");
        assertThat(rows).extracting(AllocationRow::attempt).containsOnly(2);
        assertThat(rows).extracting(AllocationRow::outcome).containsExactly(WorkerOutcome.starting(0, "n1"),
                WorkerOutcome.starting(1, "n2"), WorkerOutcome.starting(2, "n2"));
        assertThat(rows.get(2).assignment("tenant-a")).isEqualTo(assignments.get(2));
        assertThat(rows).extracting(AllocationRow::createdAt).containsOnly(Instant.ofEpochMilli(NOW));
    }

    @Test
    void aPlacementOnNothingIsRefused() {
        assertThatThrownBy(() -> WorkerCommands.placed(job(PENDING, 0), List.of(), false, Instant.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("job-a");
    }

    @Test
    void aHostIsNamedOnceWhereItHoldsTheSameShape() {
        assertThat(WorkerCommands.where(List.of(
                Assignment.whole("x-r0", "x", "t", 0, "n1", List.of(0), 0, 0),
                Assignment.whole("x-r1", "x", "t", 1, "n1", List.of(0), 0, 0),
                new Assignment("x-r2", "x", "t", 2, "n1", List.of(1), "3g.40gb", 0, 1000, 0, 0))))
                .isEqualTo("n1 GPUs [0], n1 GPU 1 MIG 3g.40gb@0");
    }
}
