package dev.gpucloud.scheduler.state;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome.Phase;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * An allocation's row as the scheduler's rules see it: one worker of one attempt of a job, on one host,
 * holding whole GPUs, a MIG slice or a fraction of a GPU, and where it is in its life. {@link WorkerCommands}
 * changes it; the adapter reads it from a stored row and writes it back.
 */
public final class AllocationRow {

    private final String id;
    private final String jobId;
    private final int attempt;
    private final int rank;
    private final String nodeId;
    private final List<Integer> gpus;
    private final String migProfile;
    private final int migStart;
    private final int milliGpu;
    private final int cpuMillis;
    private final long memoryMib;
    private final Instant createdAt;
    private Phase phase;
    private Integer exitCode;
    private String migUuid;
    private Instant startedAt;
    private Instant endedAt;

    /**
     * {@code migProfile} is null (and {@code migStart} -1) unless it holds a MIG slice; {@code milliGpu} is 1000
     * for whole GPUs and MIG slices; {@code migUuid} is the MIG instance its agent named on STARTED, or null.
     */
    public AllocationRow(String id, String jobId, int attempt, int rank, String nodeId, List<Integer> gpus,
            String migProfile, int migStart, int milliGpu, int cpuMillis, long memoryMib, Instant createdAt,
            Phase phase, Integer exitCode, String migUuid, Instant startedAt, Instant endedAt) {
        this.id = Objects.requireNonNull(id, "id");
        this.jobId = Objects.requireNonNull(jobId, "jobId");
        this.attempt = attempt;
        this.rank = rank;
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.gpus = List.copyOf(gpus);
        this.migProfile = migProfile;
        this.migStart = migStart;
        this.milliGpu = milliGpu;
        this.cpuMillis = cpuMillis;
        this.memoryMib = memoryMib;
        this.createdAt = createdAt;
        this.phase = Objects.requireNonNull(phase, "phase");
        this.exitCode = exitCode;
        this.migUuid = migUuid;
        this.startedAt = startedAt;
        this.endedAt = endedAt;
    }

    /** A new row for what a scheduling pass assigned to attempt {@code attempt}: STARTING. */
    public static AllocationRow placed(Assignment a, int attempt, Instant now) {
        return new AllocationRow(a.allocationId(), a.jobId(), attempt, a.rank(), a.nodeId(), a.gpuIndices(),
                a.migProfile(), a.migStart(), a.milliGpu(), a.cpuMillis(), a.memoryMib(), now, Phase.STARTING, null,
                null, null, null);
    }

    /** STARTING or RUNNING: it holds its GPUs. */
    public boolean isActive() {
        return phase == Phase.STARTING || phase == Phase.RUNNING;
    }

    /** This worker as {@link dev.gpucloud.scheduler.lifecycle.GangSettlement} weighs it. */
    public WorkerOutcome outcome() {
        return new WorkerOutcome(rank, nodeId, phase, phase == Phase.EXITED ? exitCode : null);
    }

    /** What it holds, as the cluster model reserves it. */
    public Assignment assignment(String tenant) {
        return new Assignment(id, jobId, tenant, rank, nodeId, gpus, migProfile, migStart,
                migProfile != null ? 0 : milliGpu, cpuMillis, memoryMib);
    }

    /** Whether it holds its GPUs, as {@link SchedulerState} replays it. */
    public AllocationRecord record(String tenant) {
        return isActive() ? new AllocationRecord.Held(assignment(tenant), phase == Phase.RUNNING)
                : new AllocationRecord.Released(id);
    }

    /** The MIG instance's UUID once its agent named it, else the slot chosen; null when not MIG. */
    public String migInstance() {
        if (migProfile == null) {
            return null;
        }
        return migUuid != null ? migUuid : migSlot();
    }

    /** The MIG slot a START names ({@code profile@start}); null when not MIG. */
    public String migSlot() {
        return migProfile == null ? null : migProfile + "@" + migStart;
    }

    /** How it reads in a log line and a job's reason: its GPUs, MIG slice or fraction. */
    public static String describe(Assignment a) {
        if (a.isMig()) {
            return "GPU " + a.gpuIndices().get(0) + " MIG " + a.migProfile() + "@" + a.migStart();
        }
        if (a.isFraction()) {
            return "GPU " + a.gpuIndices().get(0) + " (" + a.milliGpu() + " milli)";
        }
        return "GPUs [" + String.join(",", a.gpuIndices().stream().map(String::valueOf).toList()) + "]";
    }

    public String id() {
        return id;
    }

    public String jobId() {
        return jobId;
    }

    public int attempt() {
        return attempt;
    }

    public int rank() {
        return rank;
    }

    public String nodeId() {
        return nodeId;
    }

    public List<Integer> gpus() {
        return gpus;
    }

    public String migProfile() {
        return migProfile;
    }

    public int migStart() {
        return migStart;
    }

    public int milliGpu() {
        return milliGpu;
    }

    public int cpuMillis() {
        return cpuMillis;
    }

    public long memoryMib() {
        return memoryMib;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Phase phase() {
        return phase;
    }

    public Integer exitCode() {
        return exitCode;
    }

    public String migUuid() {
        return migUuid;
    }

    public Instant startedAt() {
        return startedAt;
    }

    public Instant endedAt() {
        return endedAt;
    }

    void started(Instant at, String instanceUuid) {
        phase = Phase.RUNNING;
        startedAt = at;
        if (migProfile != null && instanceUuid != null) {
            migUuid = instanceUuid;
        }
    }

    void ended(Phase end, Integer code, Instant at) {
        phase = end;
        exitCode = code;
        endedAt = at;
    }
}
