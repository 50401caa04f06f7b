package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import java.util.List;

/**
 * A job holding GPUs, as the queue's backfill and preemption see it: when it is expected to end
 * (start plus estimate; Long.MAX_VALUE when unknown), when it last saved a checkpoint, and whether a
 * higher class may preempt it. For {@link Las}: the GPU-seconds its earlier attempts received, and
 * whether it yields to a less-served job of its own class.
 */
public record RunningJob(String jobId, String tenant, PriorityClass priority, long gpuMilli, long startedAtMillis,
        long expectedEndMillis, long lastCheckpointMillis, boolean preemptible, List<String> allocationIds,
        double attainedBeforeGpuSeconds, boolean yields) {

    public RunningJob {
        allocationIds = List.copyOf(allocationIds);
    }

    /** A job with no earlier service that does not yield within its class. */
    public RunningJob(String jobId, String tenant, PriorityClass priority, long gpuMilli, long startedAtMillis,
            long expectedEndMillis, long lastCheckpointMillis, boolean preemptible, List<String> allocationIds) {
        this(jobId, tenant, priority, gpuMilli, startedAtMillis, expectedEndMillis, lastCheckpointMillis, preemptible,
                allocationIds, 0, false);
    }

    /** Seconds of work a stop now would lose. */
    public long lostWorkAt(long nowMillis) {
        return Math.max(0, (nowMillis - Math.max(startedAtMillis, lastCheckpointMillis)) / 1000);
    }

    /** GPU-seconds received by {@code nowMillis}: earlier attempts plus this one. */
    public double attainedAt(long nowMillis) {
        return attainedBeforeGpuSeconds + Math.max(0, nowMillis - startedAtMillis) / 1000.0 * gpuMilli / 1000.0;
    }
}
