package dev.gpucloud.scheduler.state;

import static dev.gpucloud.contracts.events.JobState.CHECKPOINTING;
import static dev.gpucloud.contracts.events.JobState.FAILED;
import static dev.gpucloud.contracts.events.JobState.PENDING;
import static dev.gpucloud.contracts.events.JobState.RUNNING;
import static dev.gpucloud.contracts.events.JobState.SCHEDULED;
import static dev.gpucloud.contracts.events.JobState.SUCCEEDED;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.exited;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.lost;
import static dev.gpucloud.scheduler.lifecycle.WorkerOutcome.running;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.lifecycle.TimeLimit;
import dev.gpucloud.scheduler.state.JobCommands.Effect;
import dev.gpucloud.scheduler.state.JobCommands.Outcome;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A job's time limit: the running time summed over its attempts, and what happens at the limit. Each case is a
 * job with a 2 h limit; "now" is 2 h after it started running, unless a case says otherwise.
 */
class JobCommandsTimeLimitTest {

    private static final long HOUR = 3_600_000;
    private static final long LIMIT = 7200;
    private static final long STARTED = 1_000_000;
    private static final long NOW = STARTED + 2 * HOUR;
    private static final long DEADLINE = NOW + 60_000;
    private static final RetryPolicy RETRY = new RetryPolicy(3, Set.of(127));

    /** A one-GPU job of {@code workers} workers in {@code state}, running since STARTED, with a stop request. */
    private static JobRow job(JobState state, int workers, Stop stop, long ranBeforeMillis) {
        boolean runs = state == RUNNING || state == CHECKPOINTING;
        JobRun run = JobRun.restore("job-a", 1000 * workers, RETRY, state, 1, 0, 0, null, Long.MIN_VALUE,
                runs ? STARTED : Long.MIN_VALUE, 0, 0, 0, Long.MIN_VALUE, ranBeforeMillis);
        return new JobRow("tenant-a", workers, run, "", null, stop);
    }

    private static JobRow runningJob(int workers) {
        return job(RUNNING, workers, null, 0);
    }

    private static Outcome reach(JobRow j, boolean checkpoints) {
        return JobCommands.timeLimitReached(j, LIMIT, checkpoints, DEADLINE, NOW);
    }

    @Test
    void a_running_job_that_checkpoints_is_asked_to_checkpoint_with_a_stop_that_ends_it() {
        JobRow j = runningJob(1);
        Outcome o = reach(j, true);
        assertThat(j.state()).isEqualTo(CHECKPOINTING);
        assertThat(o.effect()).isEqualTo(Effect.ANNOUNCE);
        assertThat(o.checkpointBy()).isEqualTo(DEADLINE);
        assertThat(o.stopWorkers()).isFalse();
        assertThat(j.stop()).isEqualTo(Stop.ending("time limit of 2h reached after 2h0m of running", DEADLINE, null));
        assertThat(j.reason()).startsWith("time limit of 2h reached after 2h0m of running; checkpoint by ");
    }

    @Test
    void its_checkpoint_saved_ends_it_FAILED_not_PENDING_with_where_it_can_resume_from() {
        JobRow j = runningJob(2);
        reach(j, true);
        assertThat(JobCommands.checkpointSaved(j, "s3://ckpt/job-a/1", NOW + 10_000, 1, NOW + 10_000).changed())
                .as("one of two workers saved: not yet").isFalse();
        Outcome o = JobCommands.checkpointSaved(j, "s3://ckpt/job-a/1", NOW + 20_000, 2, NOW + 20_000);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(o.stopWorkers()).isTrue();
        assertThat(o.note()).as("nothing goes back to the queue").isNull();
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running;"
                + " checkpoint saved at s3://ckpt/job-a/1");
        assertThat(j.run().resumeFrom()).isEqualTo("s3://ckpt/job-a/1");
        assertThat(j.stop()).isNull();
        assertThat(j.exitCode()).as("no exit code is made up").isNull();
    }

    @Test
    void no_checkpoint_by_the_deadline_ends_it_FAILED() {
        JobRow j = runningJob(1);
        reach(j, true);
        Outcome o = JobCommands.stopOverdue(j, DEADLINE);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(o.stopWorkers()).isTrue();
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running; no checkpoint by the"
                + " deadline");
    }

    @Test
    void a_running_job_that_does_not_checkpoint_is_stopped_at_once() {
        JobRow j = runningJob(1);
        Outcome o = reach(j, false);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(o.stopWorkers()).isTrue();
        assertThat(o.checkpointBy()).isZero();
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running; it saves no checkpoints");
    }

    @Test
    void a_scheduled_job_whose_earlier_attempts_used_the_limit_is_stopped_at_once() {
        JobRow j = job(SCHEDULED, 1, null, 2 * HOUR + 5_000);
        Outcome o = reach(j, true);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(o.stopWorkers()).isTrue();
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running over its earlier attempts;"
                + " stopped before it started again");
    }

    @Test
    void a_failed_worker_while_it_checkpoints_for_its_limit_is_not_retried() {
        JobRow j = runningJob(2);
        reach(j, true);
        Outcome o = JobCommands.settle(j, List.of(running(0, "n1"), exited(1, "n2", 1)), NOW + 5_000);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(j.run().failures()).isZero();
        assertThat(o.note()).isNull();
        assertThat(j.exitCode()).as("the exit code its worker reported is kept").isEqualTo(1);
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running; worker 1 exited 1");
    }

    @Test
    void a_lost_worker_while_it_checkpoints_for_its_limit_does_not_requeue_it() {
        JobRow j = runningJob(2);
        reach(j, true);
        JobCommands.settle(j, List.of(running(0, "n1"), lost(1, "n2")), NOW + 5_000);
        assertThat(j.state()).isEqualTo(FAILED);
        assertThat(j.reason()).isEqualTo("time limit of 2h reached after 2h0m of running; worker 1 on n2 was lost");
    }

    @Test
    void a_job_that_finishes_while_it_checkpoints_for_its_limit_succeeds() {
        JobRow j = runningJob(1);
        reach(j, true);
        JobCommands.settle(j, List.of(exited(0, "n1", 0)), NOW + 5_000);
        assertThat(j.state()).isEqualTo(SUCCEEDED);
    }

    @Test
    void a_preemption_while_it_checkpoints_for_its_limit_keeps_the_stop_ending_and_the_earlier_deadline() {
        JobRow j = runningJob(1);
        reach(j, true);
        JobCommands.askToCheckpoint(j, DEADLINE + 30_000, "preempted by job-b (HIGH)", "job-b", NOW + 1_000);
        assertThat(j.stop()).isEqualTo(Stop.ending("time limit of 2h reached after 2h0m of running", DEADLINE,
                "job-b"));
        JobCommands.checkpointSaved(j, "/c/9", NOW + 2_000, 1, NOW + 2_000);
        assertThat(j.state()).isEqualTo(FAILED);
    }

    @Test
    void a_job_checkpointing_for_a_preemption_when_its_limit_comes_ends_by_the_earlier_deadline() {
        Stop preempted = new Stop("preempted by job-b (HIGH)", NOW + 20_000, "job-b");
        JobRow j = job(CHECKPOINTING, 1, preempted, 0);
        Outcome o = reach(j, true);
        assertThat(o.effect()).isEqualTo(Effect.STORE);
        assertThat(j.stop()).isEqualTo(Stop.ending("time limit of 2h reached after 2h0m of running", NOW + 20_000,
                "job-b"));
        JobCommands.stopOverdue(j, NOW + 20_000);
        assertThat(j.state()).isEqualTo(FAILED);
    }

    @Test
    void a_preemption_near_the_limit_keeps_its_meaning_the_job_is_requeued() {
        JobRow j = job(RUNNING, 1, null, 0);
        JobCommands.askToCheckpoint(j, DEADLINE, "preempted by job-b (HIGH)", "job-b", NOW - 10_000);
        JobCommands.checkpointSaved(j, "/c/1", NOW - 5_000, 1, NOW - 5_000);
        assertThat(j.state()).isEqualTo(PENDING);
    }

    @Test
    void a_job_stopped_for_its_limit_already_is_not_asked_again() {
        JobRow j = runningJob(1);
        reach(j, true);
        assertThat(reach(j, true).changed()).isFalse();
        assertThat(j.state()).isEqualTo(CHECKPOINTING);
    }

    @Test
    void a_queued_or_ended_job_is_left_as_it_is() {
        assertThat(reach(job(PENDING, 1, null, 3 * HOUR), true).changed()).isFalse();
        assertThat(reach(job(FAILED, 1, null, 3 * HOUR), true).changed()).isFalse();
    }

    @Test
    void running_time_is_summed_across_a_requeue_and_time_queued_never_counts() {
        JobRun run = new JobRun("job-a", 1000, RETRY);
        run.scheduled("placed");
        run.started(STARTED);
        run.interrupted("preempted", STARTED + HOUR); // ran 1 h
        assertThat(run.ranMillisAt(STARTED + 5 * HOUR)).as("queued for hours: still 1 h").isEqualTo(HOUR);
        run.scheduled("placed again");
        assertThat(run.ranMillisAt(STARTED + 6 * HOUR)).as("placed, not started: still 1 h").isEqualTo(HOUR);
        run.started(STARTED + 6 * HOUR);
        assertThat(run.ranMillisAt(STARTED + 6 * HOUR + 1_800_000)).isEqualTo(HOUR + 1_800_000);
        assertThat(TimeLimit.reachedAtMillis(run, LIMIT)).as("the second hour ends 7 h after the first start")
                .isEqualTo(STARTED + 7 * HOUR);
        run.exited(1, STARTED + 6 * HOUR + 1_800_000); // retried
        assertThat(run.ranMillis()).isEqualTo(HOUR + 1_800_000);
        assertThat(TimeLimit.reachedAtMillis(run, LIMIT)).as("queued: it reaches nothing").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void a_restored_job_keeps_its_running_time_and_its_stop_for_the_limit() {
        JobRun run = JobRun.restore("job-a", 1000, RETRY, CHECKPOINTING, 2, 0, 1, null, Long.MIN_VALUE, STARTED,
                0, 0, 0, Long.MIN_VALUE, HOUR);
        assertThat(run.ranMillisAt(STARTED + HOUR)).isEqualTo(2 * HOUR);
        JobRow j = new JobRow("tenant-a", 1, run, "", null,
                Stop.ending("time limit of 2h reached after 2h0m of running", DEADLINE, null));
        JobCommands.stopOverdue(j, DEADLINE);
        assertThat(j.state()).as("after a restart the stop still ends it").isEqualTo(FAILED);
    }

    @Test
    void no_limit_is_never_reached_and_limits_read_as_written() {
        assertThat(TimeLimit.reachedAtMillis(runningJob(1).run(), 0)).isEqualTo(Long.MAX_VALUE);
        assertThat(TimeLimit.reason(5400, 5_401_000)).isEqualTo("time limit of 1h30m reached after 1h30m of running");
        assertThat(TimeLimit.reason(3, 3_200)).isEqualTo("time limit of 3s reached after 3s of running");
        assertThat(TimeLimit.reason(90, 95_000)).isEqualTo("time limit of 1m30s reached after 1m35s of running");
    }
}
