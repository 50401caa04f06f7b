package dev.gpucloud.contracts.events;

/**
 * A job submission from a producer other than gRPC, on {@code job.requests} keyed by tenant; the
 * scheduler deduplicates on (tenant, clientRequestId) exactly as it does for SubmitJob.
 */
public record JobRequest(String tenant, String clientRequestId, JobSpec spec) {
    public JobRequest {
        Tenants.require(tenant, "tenant");
        Require.text(clientRequestId, "clientRequestId");
        if (clientRequestId.length() > 128) {
            throw new IllegalArgumentException("field 'clientRequestId' must be at most 128 characters");
        }
        Require.present(spec, "spec");
    }
}
