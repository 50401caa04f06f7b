package dev.gpucloud.scheduler.framework;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.PriorityClass;
import java.util.Set;

/**
 * What the placement framework places: {@code workers} identical workers of one job, each with
 * whole GPUs, one MIG slice or a share of one GPU, plus CPU and memory; and the job's constraints.
 * {@code attempt} numbers the job's placements so allocation ids differ across resumes.
 */
public record PlacementRequest(
        String jobId,
        String tenant,
        int attempt,
        int workers,
        int gpusPerWorker,
        String migProfile,
        int milliGpu,
        int cpuMillis,
        long memoryMib,
        Set<String> models,
        long minGpuMemoryMib,
        boolean rdma,
        boolean nvlink,
        CapacityPreference capacity,
        long priceCeilingMicrosPerHour,
        String dataset,
        Set<String> avoidPools,
        PriorityClass priority) {

    public enum Kind {
        WHOLE,
        MIG,
        FRACTION
    }

    public PlacementRequest {
        if (workers < 1) {
            throw new IllegalArgumentException("a placement needs at least one worker");
        }
        models = Set.copyOf(models);
        avoidPools = avoidPools == null ? Set.of() : Set.copyOf(avoidPools);
        capacity = capacity == null ? CapacityPreference.ON_DEMAND : capacity;
        priority = priority == null ? PriorityClass.NORMAL : priority;
        if (migProfile != null && migProfile.isBlank()) {
            migProfile = null;
        }
    }

    public static PlacementRequest of(String jobId, String tenant, int attempt, JobSpec spec) {
        return new PlacementRequest(jobId, tenant, attempt, spec.workers(), spec.gpusPerWorker(), spec.migProfile(),
                spec.milliGpu(), spec.cpuMillisPerWorker(), spec.memoryMibPerWorker(), Set.copyOf(spec.gpuModels()),
                spec.minGpuMemoryMib(), spec.interconnect() == Interconnect.RDMA, spec.interconnect() == Interconnect.NVLINK,
                spec.capacity(), spec.priceCeilingMicrosPerHour(), spec.env().get("GPUCLOUD_DATASET"), Set.of(),
                spec.priority());
    }

    /** A whole-GPU request, for tests, benchmarks and the simulator. */
    public static PlacementRequest whole(String jobId, int workers, int gpusPerWorker) {
        return new PlacementRequest(jobId, "t", 0, workers, gpusPerWorker, null, 0, 0, 0, Set.of(), 0,
                workers > 1, false, CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    public Kind kind() {
        if (migProfile != null) {
            return Kind.MIG;
        }
        return gpusPerWorker > 0 ? Kind.WHOLE : Kind.FRACTION;
    }

    /** The GPU is of a model this job accepts (any, when it names none). */
    public boolean acceptsModel(dev.gpucloud.scheduler.cluster.GpuState g) {
        return models.isEmpty() || models.contains(g.model());
    }

    /** The GPU is of an accepted model and has the memory this job asks for. */
    public boolean accepts(dev.gpucloud.scheduler.cluster.GpuState g) {
        return acceptsModel(g) && g.memoryMib() >= minGpuMemoryMib;
    }

    /** Whole GPUs per worker; a slice or a fraction counts as one GPU to find. */
    public int gpusNeeded() {
        return gpusPerWorker > 0 ? gpusPerWorker : 1;
    }

    /** A gang spread over hosts that must share one RDMA fabric. */
    public boolean multiHostRdma() {
        return rdma && workers > 1;
    }

    public String allocationId(int rank) {
        return dev.gpucloud.contracts.events.AllocationIds.of(jobId, attempt, rank);
    }

    public PlacementRequest withCapacity(CapacityPreference value) {
        return new PlacementRequest(jobId, tenant, attempt, workers, gpusPerWorker, migProfile, milliGpu, cpuMillis,
                memoryMib, models, minGpuMemoryMib, rdma, nvlink, value, priceCeilingMicrosPerHour, dataset, avoidPools,
                priority);
    }

    public PlacementRequest withAvoidPools(Set<String> pools) {
        return new PlacementRequest(jobId, tenant, attempt, workers, gpusPerWorker, migProfile, milliGpu, cpuMillis,
                memoryMib, models, minGpuMemoryMib, rdma, nvlink, capacity, priceCeilingMicrosPerHour, dataset, pools,
                priority);
    }

    public PlacementRequest withAttempt(int value) {
        return new PlacementRequest(jobId, tenant, value, workers, gpusPerWorker, migProfile, milliGpu, cpuMillis,
                memoryMib, models, minGpuMemoryMib, rdma, nvlink, capacity, priceCeilingMicrosPerHour, dataset, avoidPools,
                priority);
    }

    /** GPU milli each worker holds (a MIG slice counts as one GPU's worth to find). */
    public int milliPerWorker() {
        return switch (kind()) {
            case WHOLE -> gpusPerWorker * 1000;
            case FRACTION -> milliGpu;
            case MIG -> 1000;
        };
    }
}
