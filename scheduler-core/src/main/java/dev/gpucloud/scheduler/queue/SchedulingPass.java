package dev.gpucloud.scheduler.queue;

import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Status;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * One pass over the queue, in {@link JobQueue#order()}: place what fits; the first job that does
 * not fit becomes the head, and may preempt lower-class preemptible jobs (they checkpoint first,
 * then requeue). EASY backfill: after the head, a job is placed only if it ends (by its estimate)
 * before the head's shadow time (when enough running work will have ended for the head to fit), or
 * fits in the GPUs the head will not need then. Shadow time counts GPU milli over the head's allowed
 * models, not per host, so it is optimistic for gangs that need whole hosts; jobs without an
 * estimate are assumed to run {@code defaultEstimateSeconds}. Placed jobs leave the queue.
 */
public final class SchedulingPass {

    private final PlacementFramework framework;
    private final long defaultEstimateSeconds;

    public SchedulingPass(PlacementFramework framework, long defaultEstimateSeconds) {
        this.framework = framework;
        this.defaultEstimateSeconds = defaultEstimateSeconds;
    }

    /**
     * @param running jobs holding GPUs now
     * @param preempting jobs whose preemptions are already under way (no new victims for them)
     */
    public PassResult run(Fleet fleet, JobQueue queue, Collection<RunningJob> running, Set<String> preempting,
            long nowMillis) {
        PassResult result = new PassResult();
        QueuedJob head = null;
        long extraMilli = 0;
        for (QueuedJob job : queue.order()) {
            if (head == null) {
                Decision d = framework.place(fleet, job.request(), nowMillis);
                if (d.isPlaced()) {
                    result.placed(job, d, false);
                    queue.remove(job.jobId());
                    continue;
                }
                if (d.code() == Status.Code.UNRESOLVABLE) {
                    result.unresolvable(job, d.summary());
                    continue;
                }
                head = job;
                result.reservedFor = job.jobId();
                String reason = d.summary();
                if (!preempting.contains(job.jobId())) {
                    List<RunningJob> victims = victims(fleet, job, running, nowMillis);
                    if (!victims.isEmpty()) {
                        result.preempt(job, victims);
                        reason = "preempting " + victims.size() + " lower-priority job(s), which checkpoint first";
                    }
                } else {
                    reason = "waiting for preempted jobs to checkpoint and stop";
                }
                if (queue.overSoftQuota(job)) {
                    reason = "over its tenant's soft quota; " + reason;
                }
                result.waiting(job, reason);
                long[] shadow = shadow(fleet, job, running, nowMillis);
                result.shadowMillis = shadow[0];
                extraMilli = shadow[1];
                continue;
            }
            Decision d = framework.place(fleet, job.request(), nowMillis);
            if (!d.isPlaced()) {
                if (d.code() == Status.Code.UNRESOLVABLE) {
                    result.unresolvable(job, d.summary());
                } else {
                    result.waiting(job, d.summary());
                }
                continue;
            }
            long estimate = job.runtimeEstimateSeconds() > 0 ? job.runtimeEstimateSeconds() : defaultEstimateSeconds;
            long ends = nowMillis + estimate * 1000;
            boolean endsBeforeHead = ends <= result.shadowMillis;
            boolean apart = !touchesHead(fleet, head.request(), d.assignments());
            boolean fitsInExtra = job.gpuMilli() <= extraMilli;
            if (endsBeforeHead || apart || fitsInExtra) {
                if (!endsBeforeHead && !apart) {
                    extraMilli -= job.gpuMilli();
                }
                result.placed(job, d, true);
                queue.remove(job.jobId());
            } else {
                for (Assignment a : d.assignments()) {
                    fleet.unreserve(a.allocationId());
                }
                result.waiting(job, "fits now, but would delay the reserved start of " + head.jobId()
                        + " (backfill needs a runtime estimate that ends before it)");
            }
        }
        return result;
    }

    /**
     * When the head will fit by estimates and how much GPU milli will be spare then: {shadowMillis,
     * extraMilli}. Long.MAX_VALUE when running work never frees enough.
     */
    long[] shadow(Fleet fleet, QueuedJob head, Collection<RunningJob> running, long nowMillis) {
        PlacementRequest r = head.request();
        long free = 0;
        for (NodeState n : fleet.nodes()) {
            for (int i = 0; i < n.gpuCount(); i++) {
                GpuState g = n.gpu(i);
                if (r.models().isEmpty() || r.models().contains(g.model())) {
                    free += g.freeMilli();
                }
            }
        }
        long need = head.gpuMilli();
        if (free >= need) {
            return new long[] {nowMillis, free - need};
        }
        List<RunningJob> byEnd = new ArrayList<>(running);
        byEnd.sort(Comparator.comparingLong(RunningJob::expectedEndMillis));
        for (RunningJob j : byEnd) {
            free += usable(fleet, r, j);
            if (free >= need) {
                return new long[] {j.expectedEndMillis(), free - need};
            }
        }
        return new long[] {Long.MAX_VALUE, 0};
    }

    /** Drops victims whose stop turns out not to be needed (the earlier picks may sit elsewhere). */
    private List<RunningJob> minimal(Fleet fleet, QueuedJob job, List<RunningJob> chosen, List<Assignment> lifted,
            long nowMillis) {
        List<RunningJob> kept = new ArrayList<>(chosen);
        for (RunningJob victim : chosen) {
            List<Assignment> back = lifted.stream().filter(a -> victim.allocationIds().contains(a.allocationId())).toList();
            back.forEach(fleet::reserve);
            if (framework.explain(fleet, job.request(), nowMillis).isPlaced()) {
                kept.remove(victim);
            } else {
                back.forEach(a -> fleet.unreserve(a.allocationId()));
            }
        }
        return List.copyOf(kept);
    }

    /**
     * Whether any of these assignments holds GPUs the head could use: a GPU model it accepts, on a
     * host with an RDMA fabric when it is a multi-host RDMA gang.
     */
    private static boolean touchesHead(Fleet fleet, PlacementRequest head, List<Assignment> assignments) {
        for (Assignment a : assignments) {
            NodeState node = fleet.node(a.nodeId()).orElse(null);
            if (node == null || (head.multiHostRdma() && node.fabric() == null)) {
                continue;
            }
            if (head.models().isEmpty()) {
                return true;
            }
            for (int index : a.gpuIndices()) {
                GpuState g = node.gpuByIndex(index);
                if (g != null && head.models().contains(g.model())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** GPU milli a running job holds on GPUs of a model the head accepts (only those help the head). */
    private static long usable(Fleet fleet, PlacementRequest head, RunningJob job) {
        if (head.models().isEmpty()) {
            return job.gpuMilli();
        }
        long milli = 0;
        for (String id : job.allocationIds()) {
            Assignment a = fleet.assignment(id).orElse(null);
            NodeState node = a == null ? null : fleet.node(a.nodeId()).orElse(null);
            if (node == null) {
                continue;
            }
            for (int index : a.gpuIndices()) {
                GpuState g = node.gpuByIndex(index);
                if (g != null && head.models().contains(g.model())) {
                    milli += a.isMig() ? 0 : a.isFraction() ? a.milliGpu() : 1000;
                }
            }
        }
        return milli;
    }

    /**
     * The lower-class preemptible jobs whose stop would let {@code job} fit: the cheapest to stop
     * first (lowest class, then least work lost since their last checkpoint). Empty when even all of
     * them would not make room, or {@code job} is LOW. Leaves the fleet as it was.
     */
    List<RunningJob> victims(Fleet fleet, QueuedJob job, Collection<RunningJob> running, long nowMillis) {
        if (job.priority() == PriorityClass.LOW) {
            return List.of();
        }
        List<RunningJob> candidates = new ArrayList<>();
        for (RunningJob r : running) {
            if (r.preemptible() && r.priority().ordinal() < job.priority().ordinal()) {
                candidates.add(r);
            }
        }
        if (candidates.isEmpty()) {
            return List.of();
        }
        candidates.sort(Comparator.comparingInt((RunningJob r) -> r.priority().ordinal())
                .thenComparingLong(r -> r.lostWorkAt(nowMillis)).thenComparing(RunningJob::jobId));
        List<Assignment> lifted = new ArrayList<>();
        List<RunningJob> chosen = new ArrayList<>();
        try {
            for (RunningJob victim : candidates) {
                for (String id : victim.allocationIds()) {
                    fleet.unreserve(id).ifPresent(lifted::add);
                }
                chosen.add(victim);
                if (framework.explain(fleet, job.request(), nowMillis).isPlaced()) {
                    return minimal(fleet, job, chosen, lifted, nowMillis);
                }
            }
            return List.of();
        } finally {
            for (Assignment a : lifted) {
                fleet.reserve(a);
            }
        }
    }
}
