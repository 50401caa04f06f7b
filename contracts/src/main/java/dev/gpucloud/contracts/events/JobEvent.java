package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;

/** A change in a job's lifecycle, on {@code job.events} keyed by jobId, for anyone to follow. */
public record JobEvent(
        String jobId,
        String tenant,
        JobState state,
        String reason,
        Instant occurredAt,
        List<WorkerPlacement> placement,
        String resumeFrom) {

    public JobEvent {
        Require.text(jobId, "jobId");
        Require.text(tenant, "tenant");
        Require.present(state, "state");
        Require.present(occurredAt, "occurredAt");
        placement = Require.list(placement, "placement");
    }
}
