package dev.gpucloud.scheduler.queue;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.framework.Decision;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one scheduling pass decided: jobs placed (already reserved in the fleet, in order), jobs that
 * can never run on this fleet, preemptions to start (the preemptor and its victims, which are asked
 * to checkpoint first), and for every job left waiting, why. {@code reservedFor} names the head job
 * whose start backfill protects, starting at {@code shadowMillis} at the latest as far as estimates
 * tell.
 */
public final class PassResult {

    public record Placed(QueuedJob job, Decision decision, boolean backfilled) {
    }

    public record Preemption(QueuedJob preemptor, List<RunningJob> victims) {
    }

    private final List<Placed> placed = new ArrayList<>();
    private final Map<String, String> unresolvable = new LinkedHashMap<>();
    private final List<Preemption> preemptions = new ArrayList<>();
    private final Map<String, String> waiting = new LinkedHashMap<>();
    String reservedFor;
    long shadowMillis = Long.MAX_VALUE;
    List<Assignment> reservedPlan = List.of();

    void placed(QueuedJob job, Decision d, boolean backfilled) {
        placed.add(new Placed(job, d, backfilled));
    }

    void unresolvable(QueuedJob job, String reason) {
        unresolvable.put(job.jobId(), reason);
    }

    void preempt(QueuedJob job, List<RunningJob> victims) {
        preemptions.add(new Preemption(job, victims));
    }

    void waiting(QueuedJob job, String reason) {
        waiting.put(job.jobId(), reason);
    }

    public List<Placed> placed() {
        return placed;
    }

    public Map<String, String> unresolvable() {
        return unresolvable;
    }

    public List<Preemption> preemptions() {
        return preemptions;
    }

    public Map<String, String> waiting() {
        return waiting;
    }

    public String reservedFor() {
        return reservedFor;
    }

    public long shadowMillis() {
        return shadowMillis;
    }

    /**
     * Where the head job is reserved to start at {@link #shadowMillis()}: the hosts and GPUs the
     * placement framework would give it then (empty when no head, or running work never frees enough).
     * Backfilled jobs that outlast the shadow time take none of these GPUs.
     */
    public List<Assignment> reservedPlan() {
        return reservedPlan;
    }
}
