package dev.gpucloud.scheduler.lifecycle;

import dev.gpucloud.contracts.events.JobState;

/**
 * One move of a job's state machine, as a job.event reports it: from, to, why, the checkpoint the
 * next run resumes from, and (for a stop) the work it lost: seconds since the last checkpoint and
 * GPU-seconds (that time times the GPUs it held).
 */
public record Transition(String jobId, JobState from, JobState to, String reason, String resumeFrom,
        long lostWorkSeconds, long lostGpuSeconds) {

    public boolean requeued() {
        return to == JobState.PENDING && from != JobState.PENDING;
    }
}
