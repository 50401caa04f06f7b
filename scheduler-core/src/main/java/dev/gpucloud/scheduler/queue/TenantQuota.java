package dev.gpucloud.scheduler.queue;

/**
 * A tenant's GPU quota in milli-GPUs (1000 per GPU); 0 means no limit. Above {@code hardMilli}
 * (running plus queued) a submission is refused (RESOURCE_EXHAUSTED); above {@code softMilli}
 * (running) a job waits behind every job of tenants within theirs, and runs only on capacity they
 * leave idle. {@code weight} scales the tenant's fair share.
 */
public record TenantQuota(long softMilli, long hardMilli, int weight) {

    public static final TenantQuota UNLIMITED = new TenantQuota(0, 0, 1);

    public TenantQuota {
        if (softMilli < 0 || hardMilli < 0 || weight < 1) {
            throw new IllegalArgumentException("quota limits must be >= 0 and weight >= 1");
        }
        if (hardMilli > 0 && softMilli > hardMilli) {
            throw new IllegalArgumentException("a soft quota cannot exceed the hard one");
        }
    }

    public static TenantQuota gpus(long soft, long hard) {
        return new TenantQuota(soft * 1000, hard * 1000, 1);
    }
}
