package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.liveness.AllocationReconciler;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The commands the scheduler sends hosts on {@code node.commands}, built from rows: START a worker, STOP
 * one, ask it to CHECKPOINT by a deadline, or ask its host for its STATUS. Command ids are stable for what
 * they ask, so a command written twice (an operation retried) is one command to the agent.
 */
public final class NodeCommands {

    /** The port a gang's workers meet on, at rank 0's host. */
    public static final int MASTER_PORT = 29500;

    private NodeCommands() {
    }

    /** Where a job's workers save checkpoints: under the spec's location, or under {@code defaultRoot}. */
    public static String checkpointDir(String jobId, JobSpec spec, String defaultRoot) {
        String root = spec != null && spec.checkpoint().location() != null ? spec.checkpoint().location() : defaultRoot;
        return root + "/" + jobId;
    }

    /** Where a gang's workers meet: rank 0's host, by its hostname once the fleet knows it. */
    public static String master(Fleet fleet, AllocationRow rank0) {
        return fleet.node(rank0.nodeId()).map(NodeState::hostname).orElse(rank0.nodeId()) + ":" + MASTER_PORT;
    }

    /**
     * Starts worker {@code a} of the job, to start by {@code startBy} or not at all (null: no limit); {@code again}
     * marks a START sent once more after a late one, which gets an id of its own.
     */
    public static NodeCommand start(JobRow job, JobSpec spec, String checkpointDir, AllocationRow a, String master,
            Instant startBy, boolean again, Instant now) {
        String id = a.id() + "/start" + (again ? "-" + now.toEpochMilli() : "");
        int milli = a.migProfile() == null && a.milliGpu() < 1000 ? a.milliGpu() : 0;
        return new NodeCommand(id, NodeCommandType.START, a.nodeId(), a.id(), job.jobId(), job.tenant(), a.gpus(),
                a.migSlot(), milli, a.rank(), spec.workers(), master, spec.command(), spec.env(), checkpointDir,
                job.run().resumeFrom(), startBy, now).withSecretEnv(spec.secretEnv());
    }

    /** Stops worker {@code a}, saying why (null: the job's own row says). */
    public static NodeCommand stop(AllocationRow a, String tenant, String reason, Instant now) {
        return new NodeCommand(a.id() + "/stop", NodeCommandType.STOP, a.nodeId(), a.id(), a.jobId(), tenant, a.gpus(),
                null, 0, a.rank(), 0, null, List.of(), Map.of(), null, null, null, now, reason);
    }

    /** Asks worker {@code a} to save a checkpoint by {@code byMillis}. */
    public static NodeCommand checkpoint(JobRow job, String checkpointDir, AllocationRow a, long byMillis,
            Instant now) {
        return new NodeCommand(a.id() + "/checkpoint-" + job.run().attempt() + "-" + byMillis,
                NodeCommandType.CHECKPOINT, a.nodeId(), a.id(), job.jobId(), job.tenant(), a.gpus(), null, 0, a.rank(),
                0, null, List.of(), Map.of(), checkpointDir, job.run().resumeFrom(), Instant.ofEpochMilli(byMillis),
                now);
    }

    /** What reconciliation asks a host: STOP an allocation the scheduler does not run, or the STATUS of its own. */
    public static NodeCommand ask(AllocationReconciler.Ask ask, long nowMillis) {
        NodeCommandType type = ask.unknown() ? NodeCommandType.STOP : NodeCommandType.STATUS;
        return new NodeCommand(ask.allocationId() + "/" + type.name().toLowerCase() + "-" + nowMillis, type,
                ask.nodeId(), ask.allocationId(), ask.jobId(), ask.tenant(), ask.gpuIndices(), null, 0, 0, 0, null,
                List.of(), Map.of(), null, null, null, Instant.ofEpochMilli(nowMillis), ask.reason());
    }

    /**
     * What a rule's outcome sends the job's workers that still hold GPUs ({@code allocs} may hold ended ones
     * too): STOP to each when it stops them, CHECKPOINT to each when it asks for a checkpoint.
     */
    public static List<NodeCommand> toWorkers(JobRow job, String checkpointDir, JobCommands.Outcome outcome,
            List<AllocationRow> allocs, Instant now) {
        List<NodeCommand> commands = new ArrayList<>();
        for (AllocationRow a : allocs) {
            if (!a.isActive()) {
                continue;
            }
            if (outcome.stopWorkers()) {
                commands.add(stop(a, job.tenant(), null, now));
            }
            if (outcome.checkpointBy() > 0) {
                commands.add(checkpoint(job, checkpointDir, a, outcome.checkpointBy(), now));
            }
        }
        return commands;
    }
}
