package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.WorkerPlacement;
import java.time.Instant;
import java.util.List;

/**
 * A job as the API shows it: what was asked, where it stands, and where its workers run. {@code spec} is
 * null for a job whose stored spec cannot be read.
 */
public record JobView(
        String jobId,
        String tenant,
        String clientRequestId,
        JobSpec spec,
        JobState state,
        String reason,
        List<WorkerPlacement> placement,
        Instant submittedAt,
        Instant updatedAt,
        String resumeFrom,
        Integer exitCode,
        String arrayId,
        Integer arrayIndex) {
}
