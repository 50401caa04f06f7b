package dev.gpucloud.autoscaler.core;

import java.util.List;

/**
 * Demand: a job the scheduler could not place. Each of its {@code workers} needs {@code gpusPerWorker} GPUs on one
 * host; a fabric gang ({@code needsFabric}) needs all its workers' hosts in one placement group of one RDMA-capable
 * type. {@code gpuModels} empty accepts any model; {@code maxUsdPerHour} 0 or NaN sets no price ceiling, otherwise
 * the job's share of its hosts' price (by GPUs) must not exceed it.
 */
public record PendingJob(
        String jobId,
        String pool,
        int workers,
        int gpusPerWorker,
        List<String> gpuModels,
        boolean needsFabric,
        CapacityPreference capacity,
        boolean checkpointable,
        double maxUsdPerHour,
        long pendingSince) {

    public PendingJob {
        if (jobId == null || jobId.isBlank()) {
            throw new IllegalArgumentException("jobId of a pending job is missing");
        }
        if (pool == null || pool.isBlank()) {
            throw new IllegalArgumentException("pool of job " + jobId + " is missing");
        }
        if (workers < 1) {
            throw new IllegalArgumentException("workers of job " + jobId + " must be at least 1, got " + workers);
        }
        if (gpusPerWorker < 1) {
            throw new IllegalArgumentException(
                    "gpusPerWorker of job " + jobId + " must be at least 1, got " + gpusPerWorker);
        }
        if (gpuModels == null) {
            throw new IllegalArgumentException("gpuModels of job " + jobId + " is null (empty accepts any model)");
        }
        for (String m : gpuModels) {
            if (m == null || m.isBlank()) {
                throw new IllegalArgumentException("gpuModels of job " + jobId + " holds a blank model");
            }
        }
        gpuModels = List.copyOf(gpuModels);
        if (capacity == null) {
            throw new IllegalArgumentException("capacity of job " + jobId + " is missing (ANY lets the autoscaler pick)");
        }
        if (maxUsdPerHour < 0 || Double.isInfinite(maxUsdPerHour)) {
            throw new IllegalArgumentException(
                    "maxUsdPerHour of job " + jobId + " must be >= 0 (0 or NaN: no ceiling), got " + maxUsdPerHour);
        }
    }

    /** GPUs of all workers together. */
    public int totalGpus() {
        return workers * gpusPerWorker;
    }

    /** Whether the job set a price ceiling. */
    public boolean hasPriceCeiling() {
        return !Double.isNaN(maxUsdPerHour) && maxUsdPerHour > 0;
    }

    /** The capacity to launch for this job: its own choice, else spot exactly when it can survive a reclaim. */
    public Capacity launchCapacity() {
        return switch (capacity) {
            case SPOT -> Capacity.SPOT;
            case ON_DEMAND -> Capacity.ON_DEMAND;
            case ANY -> checkpointable ? Capacity.SPOT : Capacity.ON_DEMAND;
        };
    }

    /** A job that cannot survive a reclaim waits for on-demand hosts only, unless it asked for spot itself. */
    public boolean acceptsSpotHost() {
        return capacity == CapacityPreference.SPOT || (capacity == CapacityPreference.ANY && checkpointable);
    }
}
