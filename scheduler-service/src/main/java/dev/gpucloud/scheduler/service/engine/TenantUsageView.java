package dev.gpucloud.scheduler.service.engine;

/**
 * A tenant's quota and what its jobs hold and wait for, as the leader's queue sees them; GPU amounts in
 * milli-GPU (0 quota: none).
 */
public record TenantUsageView(String tenant, long softQuotaMilli, long hardQuotaMilli, int weight, int runningJobs,
        long runningMilli, int pendingJobs, long pendingMilli, double dominantShare) {
}
