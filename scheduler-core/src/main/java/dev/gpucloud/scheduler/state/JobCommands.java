package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.GangSettlement;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.TimeLimit;
import dev.gpucloud.scheduler.lifecycle.Transition;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.time.Instant;
import java.util.List;

/**
 * What happens to a job, decided without a database, a broker or a clock: each command takes the job's
 * row ({@link JobRow}) and what happened, changes the row, and returns what the adapter must do besides
 * storing it ({@link Outcome}): tell the job's watchers, stop its workers, ask them to checkpoint, and the
 * note a requeued job's pending reason keeps. The adapter then stores the row and replays its record
 * into {@link SchedulerState}, the same record a restart reads back.
 *
 * <p>The rules: a gang moves as a whole ({@link GangSettlement}); a job stopped by the platform (a lost
 * worker or host, a spot reclaim, a preemption, a missed checkpoint deadline) goes back to the queue to
 * resume from its latest checkpoint, and its reason says how much work it lost and where it resumes; a
 * failed exit is retried within the job's {@code RetryPolicy}; a job asked to checkpoint and stop is
 * stopped once every worker saved the checkpoint, or at the deadline without it. A job at its time limit is
 * stopped the same way, but its stop {@linkplain Stop#ends ends} it: FAILED saying so, never retried nor
 * requeued, whatever else happens to it meanwhile (a lost or failed worker).
 */
public final class JobCommands {

    private JobCommands() {
    }

    /** What the row change asks of the adapter. */
    public enum Effect {
        /** Nothing changed: store nothing. */
        NONE,
        /** Store the row and replay its record; its state did not change, so watchers hear nothing. */
        STORE,
        /** Store the row, replay its record and publish a job event. */
        ANNOUNCE
    }

    /**
     * {@code stopWorkers}: send STOP to every worker of the job that still holds GPUs; {@code checkpointBy}
     * (epoch ms, 0: none): send each such worker CHECKPOINT with this deadline; {@code note}: why the job
     * went back to the queue, kept in its pending reason until it is placed again (null: none).
     */
    public record Outcome(Effect effect, boolean stopWorkers, long checkpointBy, String note) {

        static final Outcome NONE = new Outcome(Effect.NONE, false, 0, null);
        static final Outcome STORE = new Outcome(Effect.STORE, false, 0, null);
        static final Outcome ANNOUNCE = new Outcome(Effect.ANNOUNCE, false, 0, null);

        public boolean changed() {
            return effect != Effect.NONE;
        }
    }

    /**
     * Moves a placed job on from its current attempt's workers: a lost worker requeues the gang, a failed exit
     * retries it or fails it, all exited 0 succeeds it, all started runs it. A job that is not placed (queued
     * again, or ended) ignores its old workers' news.
     */
    public static Outcome settle(JobRow job, List<WorkerOutcome> attempt, long nowMillis) {
        if (!GangSettlement.placed(job.state())) {
            return Outcome.NONE;
        }
        GangSettlement.Verdict verdict = GangSettlement.settle(job.state(), job.workers(), attempt);
        JobRun run = job.run();
        Stop stop = job.stop();
        if (stop != null && stop.ends() && verdict instanceof GangSettlement.Verdict.WorkerLost lost) {
            return fail(job, stop.reason() + "; worker " + lost.rank() + " on " + lost.nodeId() + " was lost",
                    nowMillis);
        }
        if (stop != null && stop.ends() && verdict instanceof GangSettlement.Verdict.WorkerFailed failed) {
            job.exitCode(failed.exitCode());
            return fail(job, stop.reason() + "; worker " + failed.rank() + " exited " + failed.exitCode(), nowMillis);
        }
        if (verdict instanceof GangSettlement.Verdict.WorkerLost lost) {
            return interrupt(job, "worker " + lost.rank() + " on " + lost.nodeId() + " was lost"
                    + (stop != null ? " (" + stop.reason() + ")" : ""), nowMillis);
        }
        if (verdict instanceof GangSettlement.Verdict.WorkerFailed failed) {
            Transition t = run.exited(failed.exitCode(), nowMillis);
            job.exitCode(failed.exitCode());
            job.stop(null);
            if (t.to() == JobState.PENDING) {
                job.reason("worker " + failed.rank() + " " + t.reason() + "; lost " + t.lostWorkSeconds()
                        + " s of work" + (run.resumeFrom() != null ? "; resumes from " + run.resumeFrom() : ""));
                return new Outcome(Effect.ANNOUNCE, true, 0, job.reason());
            }
            job.reason("worker " + failed.rank() + " " + t.reason());
            return new Outcome(Effect.ANNOUNCE, true, 0, null);
        }
        if (verdict instanceof GangSettlement.Verdict.Succeeded) {
            run.exited(0, nowMillis);
            job.exitCode(0);
            job.stop(null);
            job.reason("all " + job.workers() + " worker(s) exited 0");
            return Outcome.ANNOUNCE;
        }
        if (verdict instanceof GangSettlement.Verdict.Running) {
            run.started(nowMillis);
            job.reason("all " + job.workers() + " worker(s) running");
            return Outcome.ANNOUNCE;
        }
        return Outcome.NONE;
    }

    /**
     * A stop the job did not cause (a lost worker or host, a reclaim, a preemption): its workers are stopped
     * and it goes back to the queue, to resume from its latest checkpoint.
     */
    public static Outcome interrupt(JobRow job, String why, long nowMillis) {
        JobRun run = job.run();
        Transition t = run.interrupted(why, nowMillis);
        job.reason(requeueReason(why, t));
        job.stop(null);
        return new Outcome(Effect.ANNOUNCE, true, 0, job.reason());
    }

    /** Why a job went back to the queue: what stopped it, the work it lost, and where it resumes. */
    public static String requeueReason(String why, Transition t) {
        return "requeued: " + why + "; lost " + t.lostWorkSeconds() + " s of work (" + t.lostGpuSeconds()
                + " GPU-s)" + (t.resumeFrom() != null ? "; resumes from " + t.resumeFrom() : "; no checkpoint yet");
    }

    /**
     * Asks a placed job to checkpoint by {@code deadlineMillis} and then stop, for {@code why} (and to make
     * room for {@code preemptor}, or null). A running job is asked (CHECKPOINTING); one that has not started
     * has nothing to save and is stopped at once; one already asked keeps the latest request, except that a stop
     * for its time limit stays one (it still ends the job, by the earlier deadline).
     */
    public static Outcome askToCheckpoint(JobRow job, long deadlineMillis, String why, String preemptor,
            long nowMillis) {
        Stop stop = new Stop(why, deadlineMillis, preemptor);
        switch (job.state()) {
            case CHECKPOINTING -> {
                Stop old = job.stop();
                job.stop(old != null && old.ends() ? Stop.ending(old.reason(),
                        Math.min(old.deadlineMillis(), deadlineMillis), preemptor != null ? preemptor : old.preemptor())
                        : stop);
                return Outcome.STORE;
            }
            case SCHEDULED -> {
                return interrupt(job, why, nowMillis);
            }
            case RUNNING -> {
                job.stop(stop);
                Transition t = job.run().checkpointRequested(why + "; checkpoint by "
                        + Instant.ofEpochMilli(deadlineMillis));
                job.reason(t.reason());
                return new Outcome(Effect.ANNOUNCE, false, deadlineMillis, null);
            }
            default -> {
                return Outcome.NONE;
            }
        }
    }

    /**
     * {@code workersSaved} of the current attempt's workers have reported a checkpoint at {@code path}: a
     * gang's checkpoint counts once every worker saved it (each saves its shard there), so a gang never
     * resumes from one some workers did not finish. A job asked to checkpoint and stop is then stopped.
     */
    public static Outcome checkpointSaved(JobRow job, String path, long savedAtMillis, int workersSaved,
            long nowMillis) {
        if (job.state().isFinal() || workersSaved < job.workers()) {
            return Outcome.NONE;
        }
        boolean wasCheckpointing = job.state() == JobState.CHECKPOINTING;
        Transition t = job.run().checkpointSaved(path, savedAtMillis);
        job.reason(t.reason());
        Stop stop = job.stop();
        if (stop != null && stop.ends() && wasCheckpointing) {
            return fail(job, stop.reason() + "; checkpoint saved at " + path, nowMillis);
        }
        if (stop != null && wasCheckpointing) {
            return interrupt(job, stop.reason() + ", after its checkpoint", nowMillis);
        }
        // a running job's entry now counts work lost from this checkpoint, which is what preemption weighs
        return t.from() != t.to() ? Outcome.ANNOUNCE : Outcome.STORE;
    }

    /**
     * A stop request's deadline came: a job still checkpointing is stopped without its checkpoint; one that
     * moved on meanwhile (saved, ended, was requeued) only forgets the request.
     */
    public static Outcome stopOverdue(JobRow job, long nowMillis) {
        Stop stop = job.stop();
        if (job.state() != JobState.CHECKPOINTING || stop == null) {
            job.stop(null);
            return Outcome.STORE;
        }
        if (stop.ends()) {
            return fail(job, stop.reason() + "; no checkpoint by the deadline", nowMillis);
        }
        return interrupt(job, stop.reason() + ", no checkpoint by the deadline", nowMillis);
    }

    /**
     * The placed job reached its time limit of {@code limitSeconds}: one that {@code checkpoints} and runs is
     * asked to checkpoint by {@code deadlineMillis}, with a stop that ends it (FAILED once its checkpoint is saved,
     * or at the deadline without one); one that does not checkpoint, or has not started, is FAILED at once. A job
     * checkpointing for another stop (a preemption) is ended by this one instead, by the earlier deadline. One
     * already stopped for its limit, or not placed, is left as it is.
     */
    public static Outcome timeLimitReached(JobRow job, long limitSeconds, boolean checkpoints, long deadlineMillis,
            long nowMillis) {
        Stop old = job.stop();
        if (!GangSettlement.placed(job.state()) || old != null && old.ends()) {
            return Outcome.NONE;
        }
        String why = TimeLimit.reason(limitSeconds, job.run().ranMillisAt(nowMillis));
        if (job.state() == JobState.SCHEDULED) {
            return fail(job, why + " over its earlier attempts; stopped before it started again", nowMillis);
        }
        if (!checkpoints) {
            return fail(job, why + "; it saves no checkpoints", nowMillis);
        }
        String asked = why + "; checkpoint by " + Instant.ofEpochMilli(deadlineMillis);
        if (job.state() == JobState.CHECKPOINTING) {
            long by = old == null ? deadlineMillis : Math.min(old.deadlineMillis(), deadlineMillis);
            job.stop(Stop.ending(why, by, old == null ? null : old.preemptor()));
            job.reason(why + "; checkpoint by " + Instant.ofEpochMilli(by));
            return Outcome.STORE;
        }
        job.stop(Stop.ending(why, deadlineMillis, null));
        job.reason(job.run().checkpointRequested(asked).reason());
        return new Outcome(Effect.ANNOUNCE, false, deadlineMillis, null);
    }

    /** Cancels a job that has not ended; its workers are stopped. An ended job stays as it is. */
    public static Outcome cancel(JobRow job, String reason, long nowMillis) {
        if (job.state().isFinal()) {
            return Outcome.NONE;
        }
        String why = reason == null || reason.isBlank() ? "cancelled by request" : reason;
        job.reason(job.run().cancelled(why, nowMillis).reason());
        job.stop(null);
        return new Outcome(Effect.ANNOUNCE, true, 0, null);
    }

    /** Ends a job that cannot go on (it can never fit, its spec cannot be read): FAILED with {@code why}. */
    public static Outcome fail(JobRow job, String why, long nowMillis) {
        if (job.state().isFinal()) {
            return Outcome.NONE;
        }
        job.reason(job.run().failed(why, nowMillis).reason());
        job.stop(null);
        return new Outcome(Effect.ANNOUNCE, true, 0, null);
    }

    /**
     * A job waiting for its dependencies learns what they say now: met, it joins the queue; never to be met, it
     * is CANCELLED with the reason; still waiting, its reason says for what (stored, not announced).
     */
    public static Outcome dependencies(JobRow job, Dependencies.Verdict verdict, long nowMillis) {
        if (job.state() != JobState.WAITING_FOR_DEPENDENCIES) {
            return Outcome.NONE;
        }
        if (verdict instanceof Dependencies.Verdict.Met met) {
            job.reason(job.run().dependenciesMet(met.summary()).reason());
            job.reason("waiting for a placement (" + met.summary() + ")");
            return Outcome.ANNOUNCE;
        }
        if (verdict instanceof Dependencies.Verdict.Never never) {
            return cancel(job, never.reason(), nowMillis);
        }
        String reason = ((Dependencies.Verdict.Waiting) verdict).reason();
        if (reason.equals(job.reason())) {
            return Outcome.NONE;
        }
        job.reason(reason);
        return Outcome.STORE;
    }

    /** A pass placed the queued job ({@code where}: its hosts and GPUs): a new attempt starts. */
    public static Outcome placed(JobRow job, String where, boolean backfilled) {
        job.run().scheduled("placed on " + where);
        job.reason((backfilled ? "backfilled onto " : "placed on ") + where);
        return Outcome.ANNOUNCE;
    }

    /** What a queued job's owner reads: why the last pass left it waiting, and why it was requeued (or null). */
    public static String pendingReason(String why, String requeueNote) {
        return "pending: " + why + (requeueNote == null ? "" : " (" + requeueNote + ")");
    }
}
