package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * An instruction to one host's agent, on {@code node.commands} keyed by nodeId. START carries what
 * the worker runs; CHECKPOINT carries the deadline to save by; STOP ends the allocation.
 * {@code commandId} is stable across redeliveries so an agent can ignore a repeat. {@code reason}
 * says why, where the type alone does not (a STOP of an allocation the scheduler never placed, or of
 * one the agent no longer reports); the agent repeats it on the allocation's EXITED or LOST event.
 *
 * <p>{@code epoch} is the scheduler leader's epoch the command was written under (0: not fenced, from a
 * sender that does not take part in leader election). An agent that has seen a command of a higher epoch
 * refuses it: a deposed leader (paused past its lease, then resumed) cannot command hosts.
 *
 * <p>{@code migInstanceUuid} names the MIG instance to run on, either by its UUID ({@code MIG-...})
 * or as a slot, {@code <profile>@<start>} (e.g. {@code 3g.40gb@4}): the scheduler places MIG work
 * by NVIDIA's placement rules and names the slot it chose; the agent runs it on the instance of that
 * profile at that start, creating it where the GPU allows, and reports the instance's UUID on the
 * STARTED allocation event.
 *
 * <p>{@code secretEnv} is the job's secret variables, for a START only: the worker's environment gets them as
 * it gets {@code env}, and the agent never logs or reports their values ({@link #toString()} shows the names).
 * node.commands is the one topic a secret value travels on.
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
        Instant issuedAt,
        String reason,
        Long epoch,
        Map<String, String> secretEnv) {

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
        secretEnv = Require.map(secretEnv, "secretEnv");
        Require.atLeast(milliGpu, 0, "milliGpu");
        Require.atLeast(rank, 0, "rank");
        Require.present(issuedAt, "issuedAt");
        epoch = epoch == null ? 0L : epoch; // written before leader election: not fenced
        Require.atLeast(epoch, 0L, "epoch");
        dev.gpucloud.contracts.limits.Check.optionalText(reason, dev.gpucloud.contracts.limits.Limits.DETAIL, "reason");
        if (type == NodeCommandType.START) {
            Require.atLeast(worldSize, 1, "worldSize");
            if (gpuIndices.isEmpty() && migInstanceUuid == null) {
                throw new IllegalArgumentException("field 'gpuIndices' must name at least one GPU for START");
            }
        }
    }

    /** A command without secret variables. */
    public NodeCommand(String commandId, NodeCommandType type, String nodeId, String allocationId, String jobId,
            String tenant, List<Integer> gpuIndices, String migInstanceUuid, int milliGpu, int rank, int worldSize,
            String masterAddr, List<String> command, Map<String, String> env, String checkpointDir, String resumeFrom,
            Instant deadline, Instant issuedAt, String reason, Long epoch) {
        this(commandId, type, nodeId, allocationId, jobId, tenant, gpuIndices, migInstanceUuid, milliGpu, rank,
                worldSize, masterAddr, command, env, checkpointDir, resumeFrom, deadline, issuedAt, reason, epoch,
                Map.of());
    }

    /** A command not fenced by a leader's epoch (0). */
    public NodeCommand(String commandId, NodeCommandType type, String nodeId, String allocationId, String jobId,
            String tenant, List<Integer> gpuIndices, String migInstanceUuid, int milliGpu, int rank, int worldSize,
            String masterAddr, List<String> command, Map<String, String> env, String checkpointDir, String resumeFrom,
            Instant deadline, Instant issuedAt, String reason) {
        this(commandId, type, nodeId, allocationId, jobId, tenant, gpuIndices, migInstanceUuid, milliGpu, rank,
                worldSize, masterAddr, command, env, checkpointDir, resumeFrom, deadline, issuedAt, reason, 0L);
    }

    /** The same command, written under the leader's {@code epoch}. */
    public NodeCommand withEpoch(long epoch) {
        return new NodeCommand(commandId, type, nodeId, allocationId, jobId, tenant, gpuIndices, migInstanceUuid,
                milliGpu, rank, worldSize, masterAddr, command, env, checkpointDir, resumeFrom, deadline, issuedAt,
                reason, epoch, secretEnv);
    }

    /** The same command, carrying the job's secret variables to its worker. */
    public NodeCommand withSecretEnv(Map<String, String> secretEnv) {
        return new NodeCommand(commandId, type, nodeId, allocationId, jobId, tenant, gpuIndices, migInstanceUuid,
                milliGpu, rank, worldSize, masterAddr, command, env, checkpointDir, resumeFrom, deadline, issuedAt,
                reason, epoch, secretEnv);
    }

    /** The record's text with the secret values redacted, for logs and dead letters' reasons. */
    @Override
    public String toString() {
        return "NodeCommand[commandId=" + commandId + ", type=" + type + ", nodeId=" + nodeId + ", allocationId="
                + allocationId + ", jobId=" + jobId + ", tenant=" + tenant + ", gpuIndices=" + gpuIndices
                + ", migInstanceUuid=" + migInstanceUuid + ", milliGpu=" + milliGpu + ", rank=" + rank
                + ", worldSize=" + worldSize + ", masterAddr=" + masterAddr + ", command=" + command + ", env=" + env
                + ", checkpointDir=" + checkpointDir + ", resumeFrom=" + resumeFrom + ", deadline=" + deadline
                + ", issuedAt=" + issuedAt + ", reason=" + reason + ", epoch=" + epoch + ", secretEnv="
                + JobSpec.redact(secretEnv) + "]";
    }

    /** A command with no reason given (START and CHECKPOINT say what they want by themselves). */
    public NodeCommand(String commandId, NodeCommandType type, String nodeId, String allocationId, String jobId,
            String tenant, List<Integer> gpuIndices, String migInstanceUuid, int milliGpu, int rank, int worldSize,
            String masterAddr, List<String> command, Map<String, String> env, String checkpointDir, String resumeFrom,
            Instant deadline, Instant issuedAt) {
        this(commandId, type, nodeId, allocationId, jobId, tenant, gpuIndices, migInstanceUuid, milliGpu, rank,
                worldSize, masterAddr, command, env, checkpointDir, resumeFrom, deadline, issuedAt, null, 0L);
    }

    /** A MIG slot a START names: a profile at a placement start (parsed by gpu-geometry's {@code MigSlot}). */
    public record MigSlot(String profile, int start) {

        /** The slot {@code value} names, or empty when it is not of the form {@code <profile>@<start>}. */
        public static java.util.Optional<MigSlot> parse(String value) {
            return dev.gpucloud.geometry.MigSlot.tryParse(value).map(s -> new MigSlot(s.profile(), s.start()));
        }

        @Override
        public String toString() {
            return profile + "@" + start;
        }
    }

    /** The MIG slot this command names, or empty when it names an instance by UUID or no MIG at all. */
    public java.util.Optional<MigSlot> migSlot() {
        return MigSlot.parse(migInstanceUuid);
    }
}
