package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Status;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.TenantQuota;
import java.util.List;

/**
 * Whether a submitted job is accepted: its tenant is one the platform serves, it stays within the tenant's
 * hard quota, and some host of the fleet could ever run it. A job that passes is queued; one that does not
 * is refused with a reason its owner can act on, and nothing is stored.
 */
public final class Admission {

    private Admission() {
    }

    /** Why a job was refused; the adapter answers each kind with its own status. */
    public enum Kind {
        UNKNOWN_TENANT,
        QUOTA,
        UNSCHEDULABLE
    }

    public record Refusal(Kind kind, String message) {
    }

    /**
     * Refuses the job, or admits it (null). {@code tenants} lists the tenants served (empty: all);
     * {@code alreadyAdmitted} is what the tenant's jobs admitted earlier in the same group commit hold, in
     * milli-GPUs, since they are not in the queue yet.
     */
    public static Refusal check(List<String> tenants, String tenant, JobSpec spec, long alreadyAdmitted,
            JobQueue queue, PlacementFramework framework, Fleet fleet) {
        if (!knownTenant(tenants, tenant)) {
            return new Refusal(Kind.UNKNOWN_TENANT, "unknown tenant '" + tenant + "'");
        }
        PlacementRequest request = PlacementRequest.of("admission", tenant, 1, spec);
        String overQuota = queue.refusal(tenant, milliGpus(request), alreadyAdmitted);
        if (overQuota != null) {
            return new Refusal(Kind.QUOTA, overQuota);
        }
        Status fits = framework.everFits(fleet, request);
        if (!fits.isSuccess()) {
            return new Refusal(Kind.UNSCHEDULABLE, "unschedulable: " + fits.reason());
        }
        return null;
    }

    /** The milli-GPUs a job holds when all its workers run, as quotas count them. */
    public static long milliGpus(JobSpec spec) {
        return milliGpus(PlacementRequest.of("admission", "", 1, spec));
    }

    private static long milliGpus(PlacementRequest request) {
        return (long) request.workers() * request.milliPerWorker();
    }

    /** An empty list admits every tenant; an entry ending in '*' admits every tenant with that prefix. */
    public static boolean knownTenant(List<String> tenants, String tenant) {
        if (tenants.isEmpty()) {
            return true;
        }
        for (String t : tenants) {
            if (t.endsWith("*") ? tenant.startsWith(t.substring(0, t.length() - 1)) : t.equals(tenant)) {
                return true;
            }
        }
        return false;
    }

    /** A quota as configured under {@code key}: "soft/hard" in GPUs, soft <= hard, 0 for none. */
    public static TenantQuota parseQuota(String key, String value) {
        String[] parts = value.trim().split("/");
        try {
            if (parts.length != 2) {
                throw new NumberFormatException();
            }
            return TenantQuota.gpus(Long.parseLong(parts[0].trim()), Long.parseLong(parts[1].trim()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be 'soft/hard' in GPUs with soft <= hard (0 = none), was '"
                    + value + "'");
        }
    }
}
