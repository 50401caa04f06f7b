package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * An instruction to one host's agent, on {@code node.commands} keyed by nodeId. START carries what
 * the worker runs; CHECKPOINT carries the deadline to save by; STOP ends the allocation.
 * {@code commandId} is stable across redeliveries so an agent can ignore a repeat.
 */
public record NodeCommand(
        String commandId,
        NodeCommandType type,
        String nodeId,
        String allocationId,
        String jobId,
        String tenant,
        List<Integer> gpuIndices,
        String migInstanceUuid,
        int milliGpu,
        int rank,
        int worldSize,
        String masterAddr,
        List<String> command,
        Map<String, String> env,
        String checkpointDir,
        String resumeFrom,
        Instant deadline,
        Instant issuedAt) {

    public NodeCommand {
        Require.text(commandId, "commandId");
        Require.present(type, "type");
        Require.text(nodeId, "nodeId");
        Require.text(allocationId, "allocationId");
        Require.text(jobId, "jobId");
        Require.text(tenant, "tenant");
        gpuIndices = Require.list(gpuIndices, "gpuIndices");
        command = Require.list(command, "command");
        env = Require.map(env, "env");
        Require.atLeast(milliGpu, 0, "milliGpu");
        Require.atLeast(rank, 0, "rank");
        Require.present(issuedAt, "issuedAt");
        if (type == NodeCommandType.START) {
            Require.atLeast(worldSize, 1, "worldSize");
            if (gpuIndices.isEmpty() && migInstanceUuid == null) {
                throw new IllegalArgumentException("field 'gpuIndices' must name at least one GPU for START");
            }
        }
    }
}
