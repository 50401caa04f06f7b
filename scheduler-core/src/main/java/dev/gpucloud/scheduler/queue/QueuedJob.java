package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.framework.PlacementRequest;

/**
 * A job waiting in the queue: its placement request, its class, its place in line ({@code seq},
 * kept across requeues so a resumed job does not lose its turn) and its runtime estimate (0 when the
 * user gave none; backfill then assumes the configured default).
 */
public record QueuedJob(String jobId, String tenant, PriorityClass priority, long seq, PlacementRequest request,
        long runtimeEstimateSeconds, long submittedAtMillis) {

    public QueuedJob {
        if (jobId == null || tenant == null || request == null) {
            throw new IllegalArgumentException("a queued job needs its id, tenant and request");
        }
        priority = priority == null ? PriorityClass.NORMAL : priority;
    }

    /** GPU milli all workers hold together. */
    public long gpuMilli() {
        return (long) request.workers() * request.milliPerWorker();
    }

    public long cpuMillis() {
        return (long) request.workers() * request.cpuMillis();
    }

    public QueuedJob withRequest(PlacementRequest value) {
        return new QueuedJob(jobId, tenant, priority, seq, value, runtimeEstimateSeconds, submittedAtMillis);
    }
}
