package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.Role;
import dev.gpucloud.scheduler.service.engine.JobNotFoundException;
import dev.gpucloud.scheduler.service.engine.JobView;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * What the caller may do with jobs and hosts (docs/security.md): the tenant of a request comes from the
 * token, a request that names another tenant is PERMISSION_DENIED, and another tenant's job is NOT_FOUND, in
 * the same words as a job that does not exist, so that ids do not leak.
 */
public final class Access {

    private Access() {
    }

    /** The tenant a job is submitted for: the one named, if the caller acts for it, or the caller's only one. */
    static String submittingTenant(Caller caller, String named) {
        if (named.isEmpty() && !caller.unrestricted()) {
            return caller.onlyTenant().orElseThrow(() -> GrpcErrors.invalid("field 'tenant' is required: the token of "
                    + caller.describe() + " does not name exactly one tenant"));
        }
        String tenant = Tenants.require(named, "tenant");
        if (!caller.actsFor(tenant)) {
            throw denied(caller.describe() + " may not submit jobs for tenant '" + tenant + "'");
        }
        return tenant;
    }

    /**
     * The tenant whose jobs a listing shows: the one named, if the caller may read it; with none named, the
     * caller's only tenant, or every tenant (null) for an operator.
     */
    public static String listingTenant(Caller caller, String named) {
        if (named.isEmpty()) {
            if (caller.readsEveryTenantsJobs()) {
                return null;
            }
            return caller.onlyTenant().filter(caller::readsJobsOf).orElseThrow(() -> GrpcErrors.invalid(
                    "field 'tenant' is required: the token of " + caller.describe()
                            + " does not name exactly one tenant whose jobs it may read"));
        }
        String tenant = Tenants.require(named, "tenant");
        if (!caller.readsJobsOf(tenant)) {
            throw denied(caller.describe() + " may not read the jobs of tenant '" + tenant + "'");
        }
        return tenant;
    }

    /** The job, if the caller may read it; else NOT_FOUND, as for a job that does not exist. */
    public static JobView readable(Caller caller, JobView job) {
        if (!caller.readsJobsOf(job.tenant())) {
            throw new JobNotFoundException(job.jobId());
        }
        return job;
    }

    /** The job, if the caller may cancel it: NOT_FOUND where it may not even read it, else PERMISSION_DENIED. */
    static JobView cancellable(Caller caller, JobView job) {
        readable(caller, job);
        if (!caller.actsFor(job.tenant())) {
            throw denied(caller.describe() + " may read but not cancel the jobs of tenant '" + job.tenant() + "'");
        }
        return job;
    }

    /**
     * The tenant whose quota and usage is asked for: the one named, or the caller's only one, if the caller reads
     * its usage (its tenant-admins, finance and operators).
     */
    public static String usageTenant(Caller caller, String named) {
        String tenant = named.isEmpty() ? caller.onlyTenant().orElseThrow(() -> GrpcErrors.invalid(
                "field 'tenant' is required: the token of " + caller.describe() + " does not name exactly one tenant"))
                : Tenants.require(named, "tenant");
        if (!caller.readsUsageOf(tenant)) {
            throw denied(caller.describe() + " may not read the quota and usage of tenant '" + tenant
                    + "': that takes the role tenant-admin of it, finance or operator");
        }
        return tenant;
    }

    /** Passes for an operator only: the hosts of the fleet are theirs to see. */
    static void operator(Caller caller, String what) {
        if (!caller.has(Role.OPERATOR)) {
            throw denied(caller.describe() + " may not " + what + ": that takes the role operator");
        }
    }

    public static StatusRuntimeException denied(String message) {
        return Status.PERMISSION_DENIED.withDescription(message).asRuntimeException();
    }
}
