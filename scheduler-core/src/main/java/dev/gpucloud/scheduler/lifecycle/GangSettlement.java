package dev.gpucloud.scheduler.lifecycle;

import dev.gpucloud.contracts.events.JobState;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What a placed job does next, given its current attempt's workers: a gang moves as a whole. A lost
 * worker requeues the gang (it wins over a failed one: the loss is not the job's fault); a failed exit
 * ends the attempt (retried or failed by {@link JobRun#exited}); every worker exited 0 succeeds it; a
 * SCHEDULED job whose workers all started (or already exited 0) runs. A job that is not placed (queued,
 * or ended) ignores its workers' news. When several workers were lost or failed, the lowest rank is named.
 */
public final class GangSettlement {

    /** The exit code reported for a worker that exited without saying how. */
    public static final int UNKNOWN_EXIT_CODE = -1;

    private GangSettlement() {
    }

    /** What the adapter carries out; each names what its reason text needs. */
    public sealed interface Verdict {

        /** Nothing to do: the job waits for more of its workers, or is not placed. */
        record Unchanged() implements Verdict {
        }

        /** Worker {@code rank} on {@code nodeId} was lost: stop the others and requeue the gang. */
        record WorkerLost(int rank, String nodeId) implements Verdict {
        }

        /** Worker {@code rank} exited {@code exitCode} (-1: unknown): the attempt ends; stop the others. */
        record WorkerFailed(int rank, int exitCode) implements Verdict {
        }

        /** Every worker exited 0. */
        record Succeeded() implements Verdict {
        }

        /** Every worker of a SCHEDULED job started (or already exited 0). */
        record Running() implements Verdict {
        }
    }

    /**
     * Settles a job in state {@code state} that runs {@code workers} workers, from its current attempt's
     * {@code outcomes} (missing workers count as neither started nor exited).
     */
    public static Verdict settle(JobState state, int workers, List<WorkerOutcome> outcomes) {
        Objects.requireNonNull(state, "state");
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, was " + workers);
        }
        if (!placed(state)) {
            return new Verdict.Unchanged();
        }
        Optional<WorkerOutcome> lost = lowestRank(outcomes, o -> o.phase() == WorkerOutcome.Phase.LOST);
        if (lost.isPresent()) {
            return new Verdict.WorkerLost(lost.get().rank(), lost.get().nodeId());
        }
        Optional<WorkerOutcome> failed = lowestRank(outcomes, WorkerOutcome::failed);
        if (failed.isPresent()) {
            Integer code = failed.get().exitCode();
            return new Verdict.WorkerFailed(failed.get().rank(), code == null ? UNKNOWN_EXIT_CODE : code);
        }
        long exitedOk = outcomes.stream().filter(o -> o.phase() == WorkerOutcome.Phase.EXITED).count();
        long running = outcomes.stream().filter(o -> o.phase() == WorkerOutcome.Phase.RUNNING).count();
        if (exitedOk == workers) {
            return new Verdict.Succeeded();
        }
        if (state == JobState.SCHEDULED && running + exitedOk == workers) {
            return new Verdict.Running();
        }
        return new Verdict.Unchanged();
    }

    /** Whether a job in {@code state} holds workers whose news moves it: it is placed and has not ended. */
    public static boolean placed(JobState state) {
        return state == JobState.SCHEDULED || state == JobState.RUNNING || state == JobState.CHECKPOINTING;
    }

    private static Optional<WorkerOutcome> lowestRank(List<WorkerOutcome> outcomes,
            Predicate<WorkerOutcome> which) {
        return outcomes.stream().filter(which).min(Comparator.comparingInt(WorkerOutcome::rank));
    }
}
