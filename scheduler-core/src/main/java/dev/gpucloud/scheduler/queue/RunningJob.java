package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import java.util.List;

/**
 * A job holding GPUs, as the queue's backfill and preemption see it: when it is expected to end
 * (start plus estimate; Long.MAX_VALUE when unknown), when it last saved a checkpoint, and whether a
 * higher class may preempt it.
 */
public record RunningJob(String jobId, String tenant, PriorityClass priority, long gpuMilli, long startedAtMillis,
        long expectedEndMillis, long lastCheckpointMillis, boolean preemptible, List<String> allocationIds) {

    public RunningJob {
        allocationIds = List.copyOf(allocationIds);
    }

    /** Seconds of work a stop now would lose. */
    public long lostWorkAt(long nowMillis) {
        return Math.max(0, (nowMillis - Math.max(startedAtMillis, lastCheckpointMillis)) / 1000);
    }
}
