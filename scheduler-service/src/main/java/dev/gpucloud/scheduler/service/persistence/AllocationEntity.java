package dev.gpucloud.scheduler.service.persistence;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/** One worker's GPUs on one host for one attempt of a job. */
@Entity
@Table(name = "allocations")
public class AllocationEntity {
    public static final String STARTING = "STARTING";
    public static final String RUNNING = "RUNNING";
    public static final String EXITED = "EXITED";
    public static final String LOST = "LOST";

    @Id
    public String id;
    @Column(name = "job_id")
    public String jobId;
    public int attempt;
    public int rank;
    @Column(name = "node_id")
    public String nodeId;
    @Column(name = "gpu_indices")
    public String gpuIndices;
    public String state;
    @Column(name = "exit_code")
    public Integer exitCode;
    @Column(name = "created_at")
    public Instant createdAt;
    @Column(name = "started_at")
    public Instant startedAt;
    @Column(name = "ended_at")
    public Instant endedAt;
    @Column(name = "mig_profile")
    public String migProfile;
    @Column(name = "mig_start")
    public int migStart = -1;
    /** The MIG instance the agent ran this worker on, once it said so on STARTED. */
    @Column(name = "mig_uuid")
    public String migUuid;
    @Column(name = "milli_gpu")
    public int milliGpu = 1000;
    @Column(name = "cpu_millis")
    public int cpuMillis;
    @Column(name = "memory_mib")
    public long memoryMib;

    /** The MIG instance's UUID once the agent reported it, else the slot chosen; null when not MIG. */
    public String migInstance() {
        if (migProfile == null) {
            return null;
        }
        return migUuid != null ? migUuid : migProfile + "@" + migStart;
    }

    public boolean isActive() {
        return STARTING.equals(state) || RUNNING.equals(state);
    }

    public List<Integer> gpus() {
        if (gpuIndices == null || gpuIndices.isBlank()) {
            return List.of();
        }
        return Arrays.stream(gpuIndices.split(",")).map(Integer::valueOf).toList();
    }

    public static String encodeGpus(List<Integer> gpus) {
        return gpus.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
