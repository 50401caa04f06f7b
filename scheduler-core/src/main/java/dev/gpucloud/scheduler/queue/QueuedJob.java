package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.framework.PlacementRequest;

/**
 * A job waiting in the queue: its placement request, its class, its place in line ({@code seq},
 * kept across requeues so a resumed job does not lose its turn) and its runtime estimate (0 when the
 * user gave none; backfill then assumes the configured default). For {@link Las}: the GPU-seconds its
 * earlier attempts received, since when it has waited in line (its submission, or the end of its last
 * attempt), and whether, once running, it yields its GPUs to a less-served job of its class (it resumes
 * from a checkpoint).
 */
public record QueuedJob(String jobId, String tenant, PriorityClass priority, long seq, PlacementRequest request,
        long runtimeEstimateSeconds, long submittedAtMillis, double attainedGpuSeconds, long queuedSinceMillis,
        boolean yields) {

    public QueuedJob {
        if (jobId == null || tenant == null || request == null) {
            throw new IllegalArgumentException("a queued job needs its id, tenant and request");
        }
        if (!(attainedGpuSeconds >= 0)) {
            throw new IllegalArgumentException("attained service must be >= 0: " + attainedGpuSeconds);
        }
        priority = priority == null ? PriorityClass.NORMAL : priority;
    }

    /** A job that has received no service, queued since its submission, that does not yield. */
    public QueuedJob(String jobId, String tenant, PriorityClass priority, long seq, PlacementRequest request,
            long runtimeEstimateSeconds, long submittedAtMillis) {
        this(jobId, tenant, priority, seq, request, runtimeEstimateSeconds, submittedAtMillis, 0, submittedAtMillis,
                false);
    }

    /** GPU milli all workers hold together. */
    public long gpuMilli() {
        return (long) request.workers() * request.milliPerWorker();
    }

    public long cpuMillis() {
        return (long) request.workers() * request.cpuMillis();
    }

    public QueuedJob withRequest(PlacementRequest value) {
        return new QueuedJob(jobId, tenant, priority, seq, value, runtimeEstimateSeconds, submittedAtMillis,
                attainedGpuSeconds, queuedSinceMillis, yields);
    }
}
