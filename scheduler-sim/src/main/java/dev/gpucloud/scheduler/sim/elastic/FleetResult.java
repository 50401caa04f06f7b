package dev.gpucloud.scheduler.sim.elastic;

/**
 * One run's figures: cost, job completion times (finish - submit) and makespan in seconds, paid and idle (paid but
 * unallocated) GPU-hours, and the fleet's launches, releases and spot reclaims; {@code requeues} counts jobs moved
 * by a reclaim or a drain, {@code lostGpuHours} the work they redid since their last checkpoint; {@code drains}
 * counts hosts the autoscaler emptied, {@code spotShortfall} spot hosts the provider
 * could not sell as spot (bought on demand instead, or refused).
 */
public record FleetResult(String window, String fleet, int jobs, double costUsd, double avgJctSeconds,
        double p99JctSeconds, double makespanSeconds, double paidGpuHours, double idleGpuHours, int launches,
        int releases, int interruptions, int requeues, double lostGpuHours, int drains, int spotShortfall, long wallMillis) {

    /** Idle GPU-hours as a share of paid GPU-hours. */
    public double idleShare() {
        return paidGpuHours == 0 ? 0 : idleGpuHours / paidGpuHours;
    }
}
