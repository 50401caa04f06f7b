package dev.gpucloud.scheduler.state;

import static dev.gpucloud.contracts.events.JobState.CANCELLED;
import static dev.gpucloud.contracts.events.JobState.CHECKPOINTING;
import static dev.gpucloud.contracts.events.JobState.FAILED;
import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SCHEDULED;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.exited;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.lost;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.running;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.starting;
import static dev.gpucloud.scheduler.state.JobCommands.Effect.ANNOUNCE;
import static dev.gpucloud.scheduler.state.JobCommands.Effect.NONE;
import static dev.gpucloud.scheduler.state.JobCommands.Effect.STORE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome;
import dev.gpucloud.scheduler.state.JobCommands.Effect;
import dev.gpucloud.scheduler.state.JobCommands.Outcome;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The rules that move a job, as tables: from a row and what happened, to the row and what to carry out. */
class JobCommandsTest {

    /** Started at t = 100 s, checkpointed at 160 s; "now" is 200 s. */
    private static final long STARTED = 100_000;
    private static final long NOW = 200_000;
    private static final RetryPolicy RETRY = new RetryPolicy(2, Set.of(127));
    private static final Stop PREEMPTED = new Stop("preempted by job-b (HIGH)", 230_000, "job-b");

    /** A job of {@code workers} 1-GPU workers in {@code state}, on its first attempt. */
    private static JobRow job(JobState state, int workers, Stop stop, String resumeFrom, int failures) {
        JobRun run = JobRun.restore("job-a", 1000 * workers, RETRY, state, state == PENDING ? 0 : 1, failures, 0,
                resumeFrom, resumeFrom == null ? Long.MIN_VALUE : 160_000,
                state == RUNNING || state == CHECKPOINTING ? STARTED : Long.MIN_VALUE, 0, 0);
        return new JobRow("tenant-a", workers, run, "", null, stop);
    }

    private static JobRow job(JobState state, int workers) {
        return job(state, workers, null, null, 0);
    }

    record Row(String what, JobRow job, Function<JobRow, Outcome> command, JobState state, Effect effect,
            boolean stopsWorkers, String reason) {
        @Override
        public String toString() {
            return what;
        }
    }

    private static Arguments row(String what, JobRow job, Function<JobRow, Outcome> command, JobState state,
            Effect effect, boolean stopsWorkers, String reason) {
        return Arguments.of(new Row(what, job, command, state, effect, stopsWorkers, reason));
    }

    private static Function<JobRow, Outcome> settle(WorkerOutcome... workers) {
        return j -> JobCommands.settle(j, List.of(workers), NOW);
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // a gang moves as a whole
                row("one of two workers started: wait", job(SCHEDULED, 2), settle(running(0, "n1"), starting(1, "n2")),
                        SCHEDULED, NONE, false, ""),
                row("both started: RUNNING", job(SCHEDULED, 2), settle(running(0, "n1"), running(1, "n2")),
                        RUNNING, ANNOUNCE, false, "all 2 worker(s) running"),
                row("both exited 0: SUCCEEDED", job(RUNNING, 2), settle(exited(0, "n1", 0), exited(1, "n2", 0)),
                        SUCCEEDED, ANNOUNCE, false, "all 2 worker(s) exited 0"),
                row("a lost worker requeues the gang, counting its lost work", job(RUNNING, 2),
                        settle(running(0, "n1"), lost(1, "n2")), PENDING, ANNOUNCE, true,
                        "requeued: worker 1 on n2 was lost; lost 100 s of work (200 GPU-s); no checkpoint yet"),
                row("a lost worker of a job asked to stop names the request", job(CHECKPOINTING, 1, PREEMPTED, "/c/1", 0),
                        settle(lost(0, "n1")), PENDING, ANNOUNCE, true,
                        "requeued: worker 0 on n1 was lost (preempted by job-b (HIGH)); lost 40 s of work (40 GPU-s);"
                                + " resumes from /c/1"),
                row("a lost worker wins over a failed one", job(RUNNING, 2), settle(exited(0, "n1", 1), lost(1, "n2")),
                        PENDING, ANNOUNCE, true,
                        "requeued: worker 1 on n2 was lost; lost 100 s of work (200 GPU-s); no checkpoint yet"),
                row("a failed exit is retried", job(RUNNING, 1, null, "/c/1", 0), settle(exited(0, "n1", 1)),
                        PENDING, ANNOUNCE, true, "worker 0 exited 1, retry 1 of 2; lost 40 s of work; resumes from /c/1"),
                row("a failed exit past the retries fails it", job(RUNNING, 1, null, null, 2), settle(exited(0, "n1", 3)),
                        FAILED, ANNOUNCE, true, "worker 0 exited 3 after 2 retries"),
                row("an exit code never retried fails it at once", job(RUNNING, 1), settle(exited(0, "n1", 127)),
                        FAILED, ANNOUNCE, true, "worker 0 exited 127 (not retried)"),
                row("an exit without a code counts as failed", job(RUNNING, 1, null, null, 2),
                        settle(exited(0, "n1", null)), FAILED, ANNOUNCE, true, "worker 0 exited -1 after 2 retries"),
                row("a requeued job ignores its old workers", job(PENDING, 1), settle(exited(0, "n1", 0)),
                        PENDING, NONE, false, ""),
                row("an ended job ignores its old workers", job(CANCELLED, 1), settle(lost(0, "n1")),
                        CANCELLED, NONE, false, ""),
                // a stop request: checkpoint by a deadline, then stop
                row("a running job is asked to checkpoint", job(RUNNING, 1),
                        j -> JobCommands.askToCheckpoint(j, 230_000, "spot interruption on n1", null, NOW),
                        CHECKPOINTING, ANNOUNCE, false, "spot interruption on n1; checkpoint by 1970-01-01T00:03:50Z"),
                row("a job not started yet has nothing to save: stopped at once", job(SCHEDULED, 1),
                        j -> JobCommands.askToCheckpoint(j, 230_000, "spot interruption on n1", null, NOW),
                        PENDING, ANNOUNCE, true,
                        "requeued: spot interruption on n1; lost 0 s of work (0 GPU-s); no checkpoint yet"),
                row("a queued job is not asked", job(PENDING, 1),
                        j -> JobCommands.askToCheckpoint(j, 230_000, "spot interruption on n1", null, NOW),
                        PENDING, NONE, false, ""),
                row("a checkpointing job asked again keeps the latest request", job(CHECKPOINTING, 1, PREEMPTED, null, 0),
                        j -> JobCommands.askToCheckpoint(j, 210_000, "spot interruption on n1", null, NOW),
                        CHECKPOINTING, STORE, false, ""),
                row("the checkpoint of a job asked to stop stops it", job(CHECKPOINTING, 1, PREEMPTED, null, 0),
                        j -> JobCommands.checkpointSaved(j, "/c/2", 195_000, 1, NOW), PENDING, ANNOUNCE, true,
                        "requeued: preempted by job-b (HIGH), after its checkpoint; lost 5 s of work (5 GPU-s);"
                                + " resumes from /c/2"),
                row("a gang's checkpoint counts once every worker saved it", job(CHECKPOINTING, 2, PREEMPTED, null, 0),
                        j -> JobCommands.checkpointSaved(j, "/c/2", 195_000, 1, NOW), CHECKPOINTING, NONE, false, ""),
                row("a running job's own checkpoint is kept, without an event", job(RUNNING, 1),
                        j -> JobCommands.checkpointSaved(j, "/c/2", 195_000, 1, NOW), RUNNING, STORE, false,
                        "checkpoint saved at /c/2"),
                row("a checkpointing job without a stored request runs on after saving", job(CHECKPOINTING, 1),
                        j -> JobCommands.checkpointSaved(j, "/c/2", 195_000, 1, NOW), RUNNING, ANNOUNCE, false,
                        "checkpoint saved at /c/2"),
                row("no checkpoint by the deadline: stopped without it", job(CHECKPOINTING, 1, PREEMPTED, "/c/1", 0),
                        j -> JobCommands.stopOverdue(j, NOW), PENDING, ANNOUNCE, true,
                        "requeued: preempted by job-b (HIGH), no checkpoint by the deadline; lost 40 s of work"
                                + " (40 GPU-s); resumes from /c/1"),
                row("a job that moved on before the deadline only forgets the request", job(RUNNING, 1, PREEMPTED, null, 0),
                        j -> JobCommands.stopOverdue(j, NOW), RUNNING, STORE, false, ""),
                // cancel and fail
                row("cancelling stops the workers", job(RUNNING, 2), j -> JobCommands.cancel(j, " ", NOW),
                        CANCELLED, ANNOUNCE, true, "cancelled by request"),
                row("cancelling an ended job changes nothing", job(SUCCEEDED, 1), j -> JobCommands.cancel(j, "late", NOW),
                        SUCCEEDED, NONE, false, ""),
                row("a job whose spec cannot be read can still be cancelled", job(RUNNING, 0),
                        j -> JobCommands.cancel(j, "by its owner", NOW), CANCELLED, ANNOUNCE, true, "by its owner"),
                row("a job that can never fit fails", job(PENDING, 1),
                        j -> JobCommands.fail(j, "unschedulable: needs 9 GPUs on one host", NOW), FAILED, ANNOUNCE, true,
                        "unschedulable: needs 9 GPUs on one host"),
                row("a pass places a queued job", job(PENDING, 1), j -> JobCommands.placed(j, "n1 GPUs [0]", true),
                        SCHEDULED, ANNOUNCE, false, "backfilled onto n1 GPUs [0]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void eachCommandMovesTheJobAsTheRulesSay(Row r) {
        String before = r.job().reason();
        Outcome outcome = r.command().apply(r.job());

        assertThat(r.job().state()).as("state").isEqualTo(r.state());
        assertThat(outcome.effect()).as("effect").isEqualTo(r.effect());
        assertThat(outcome.stopWorkers()).as("stops its workers").isEqualTo(r.stopsWorkers());
        assertThat(r.job().reason()).as("reason").isEqualTo(r.effect() == NONE ? before : r.reason().isEmpty()
                ? r.job().reason() : r.reason());
        if (r.state() == PENDING && r.effect() == ANNOUNCE) {
            assertThat(outcome.note()).as("a requeued job's note is its reason").isEqualTo(r.job().reason());
        } else {
            assertThat(outcome.note()).as("note").isNull();
        }
        if (r.job().state().isFinal() || r.state() == PENDING) {
            assertThat(r.job().stop()).as("an ended or requeued job has no stop request").isNull();
        }
    }

    @Test
    void aRunningJobAskedToCheckpointIsSentTheDeadlineAndKeepsTheRequest() {
        JobRow j = job(RUNNING, 2);

        Outcome o = JobCommands.askToCheckpoint(j, 230_000, "preempted by job-b (HIGH)", "job-b", NOW);

        assertThat(o.checkpointBy()).isEqualTo(230_000);
        assertThat(j.stop()).isEqualTo(PREEMPTED);
    }

    @Test
    void askedAgainTheLatestRequestStands() {
        JobRow j = job(CHECKPOINTING, 1, PREEMPTED, null, 0);

        Outcome o = JobCommands.askToCheckpoint(j, 210_000, "spot interruption on n1", null, NOW);

        assertThat(o.checkpointBy()).as("its workers were asked already").isZero();
        assertThat(j.stop()).isEqualTo(new Stop("spot interruption on n1", 210_000, null));
    }

    @Test
    void aSavedCheckpointIsWhereTheNextAttemptResumesAndItsTimeCountsLostWork() {
        JobRow j = job(RUNNING, 1);
        JobCommands.checkpointSaved(j, "/c/2", 195_000, 1, NOW);

        JobCommands.settle(j, List.of(lost(0, "n1")), NOW);

        assertThat(j.run().resumeFrom()).isEqualTo("/c/2");
        assertThat(j.run().lostWorkSeconds()).as("work since the checkpoint, not since the start").isEqualTo(5);
        assertThat(j.run().interruptions()).isEqualTo(1);
        assertThat(j.reason()).endsWith("; resumes from /c/2");
    }

    @Test
    void aFailedExitRecordsItsCodeAndASuccessCodeZero() {
        JobRow failed = job(RUNNING, 1, null, null, 2);
        JobRow succeeded = job(RUNNING, 1);

        JobCommands.settle(failed, List.of(exited(0, "n1", 3)), NOW);
        JobCommands.settle(succeeded, List.of(exited(0, "n1", 0)), NOW);

        assertThat(failed.exitCode()).isEqualTo(3);
        assertThat(succeeded.exitCode()).isZero();
    }

    @Test
    void aPlacementStartsANewAttempt() {
        JobRow j = job(PENDING, 1);

        JobCommands.placed(j, "n1 GPUs [0]", false);

        assertThat(j.run().attempt()).isEqualTo(1);
        assertThat(j.reason()).isEqualTo("placed on n1 GPUs [0]");
    }

    @Test
    void aPendingReasonCarriesWhyTheJobWasRequeued() {
        assertThat(JobCommands.pendingReason("no host has 8 free GPUs", null)).isEqualTo(
                "pending: no host has 8 free GPUs");
        assertThat(JobCommands.pendingReason("no host has 8 free GPUs", "requeued: host n1 left")).isEqualTo(
                "pending: no host has 8 free GPUs (requeued: host n1 left)");
    }
}
