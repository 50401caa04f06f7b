package dev.gpucloud.scheduler.lifecycle;

import java.util.Objects;

/**
 * One worker of a job's current attempt, as the scheduler last heard of it: where it runs, whether it
 * is starting, running, has exited (with its exit code, null when the agent did not say) or was lost.
 */
public record WorkerOutcome(int rank, String nodeId, Phase phase, Integer exitCode) {

    /** Where a worker is in its life; STARTING and RUNNING still hold GPUs. */
    public enum Phase {
        STARTING, RUNNING, EXITED, LOST
    }

    public WorkerOutcome {
        if (rank < 0) {
            throw new IllegalArgumentException("rank must be >= 0, was " + rank);
        }
        Objects.requireNonNull(phase, "phase");
        if (exitCode != null && phase != Phase.EXITED) {
            throw new IllegalArgumentException("only an exited worker has an exit code; worker " + rank + " is "
                    + phase);
        }
    }

    public static WorkerOutcome starting(int rank, String nodeId) {
        return new WorkerOutcome(rank, nodeId, Phase.STARTING, null);
    }

    public static WorkerOutcome running(int rank, String nodeId) {
        return new WorkerOutcome(rank, nodeId, Phase.RUNNING, null);
    }

    /** A worker that exited with {@code exitCode}; null when the agent did not say, which counts as failure. */
    public static WorkerOutcome exited(int rank, String nodeId, Integer exitCode) {
        return new WorkerOutcome(rank, nodeId, Phase.EXITED, exitCode);
    }

    public static WorkerOutcome lost(int rank, String nodeId) {
        return new WorkerOutcome(rank, nodeId, Phase.LOST, null);
    }

    /** It exited with anything but 0, or without saying how. */
    public boolean failed() {
        return phase == Phase.EXITED && (exitCode == null || exitCode != 0);
    }
}
