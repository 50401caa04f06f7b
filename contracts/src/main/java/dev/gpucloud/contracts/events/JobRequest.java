package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;

/**
 * A job submission from a producer other than gRPC, on {@code job.requests} keyed by tenant; the
 * scheduler deduplicates on (tenant, clientRequestId) exactly as it does for SubmitJob.
 */
public record JobRequest(String tenant, String clientRequestId, JobSpec spec) {
    public JobRequest {
        Tenants.require(tenant, "tenant");
        Check.text(clientRequestId, Limits.ID, "clientRequestId");
        Require.present(spec, "spec");
    }
}
