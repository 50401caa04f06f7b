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
 * then requeue). EASY backfill, host by host: the head's reservation is where the placement
 * framework itself would put it once enough running work has ended by estimates (the shadow time),
 * on which hosts and GPUs. After the head, a job is placed only if it ends (by its estimate) before
 * the shadow time, or takes none of the GPUs the head's reservation needs (nor, on those hosts, CPU
 * or memory it would share); a job that lands on them is tried once more with the reservation
 * held, so it goes elsewhere if it can. Jobs without an estimate are assumed to run
 * {@code defaultEstimateSeconds}. Placed jobs leave the queue.
 */
public final class SchedulingPass {

    private final PlacementFramework framework;
    private final long defaultEstimateSeconds;

    public SchedulingPass(PlacementFramework framework, long defaultEstimateSeconds) {
        this.framework = framework;
        this.defaultEstimateSeconds = defaultEstimateSeconds;
    }

    /**
     * Places one job, or says why it cannot be. A job whose placement throws (a bug its request
     * triggers) is unresolvable with the failure as its reason: it fails alone, and the pass goes on
     * for every other job instead of failing whole, again and again.
     *
     * <p>A job whose request has the shape of one that did not fit earlier in this pass is answered at
     * once ({@code misses}): a pass only adds to the fleet's load (what preemption frees is freed later),
     * so what did not fit does not fit later in the same pass. A queue of thousands then costs one
     * framework call per shape that waits, not one per job.
     */
    private Decision place(Fleet fleet, QueuedJob job, long nowMillis, java.util.Map<List<Object>, Decision> misses) {
        List<Object> shape = shape(job.request());
        Decision known = misses.get(shape);
        if (known != null) {
            return known;
        }
        Decision d;
        try {
            d = framework.place(fleet, job.request(), nowMillis);
        } catch (RuntimeException e) {
            return Decision.unresolvable("placement failed: " + e); // this job's own trouble, not its shape's
        }
        if (!d.isPlaced()) {
            misses.put(shape, d);
        }
        return d;
    }

    /** Everything of a request that placement reads: all but which job and attempt it is. */
    static List<Object> shape(PlacementRequest r) {
        return java.util.Arrays.asList(r.tenant(), r.workers(), r.gpusPerWorker(), r.migProfile(), r.milliGpu(),
                r.cpuMillis(), r.memoryMib(), r.models(), r.minGpuMemoryMib(), r.rdma(), r.nvlink(), r.capacity(),
                r.priceCeilingMicrosPerHour(), r.dataset(), r.avoidPools(), r.priority());
    }

    /**
     * @param running jobs holding GPUs now
     * @param preempting jobs whose preemptions are already under way (no new victims for them)
     */
    public PassResult run(Fleet fleet, JobQueue queue, Collection<RunningJob> running, Set<String> preempting,
            long nowMillis) {
        return run(fleet, queue, running, preempting, Set.of(), nowMillis);
    }

    /**
     * @param running jobs holding GPUs now
     * @param preempting jobs whose preemptions are already under way (no new victims for them)
     * @param stopping running jobs already asked to checkpoint and stop (no one's victims again)
     */
    public PassResult run(Fleet fleet, JobQueue queue, Collection<RunningJob> running, Set<String> preempting,
            Set<String> stopping, long nowMillis) {
        PassResult result = new PassResult();
        QueuedJob head = null;
        List<Assignment> plan = List.of();
        Las las = queue.las();
        Set<String> taken = new java.util.HashSet<>(stopping); // victims chosen in this pass, or before it
        java.util.Map<List<Object>, Decision> misses = new java.util.HashMap<>();
        java.util.Map<List<Object>, Integer> noVictims = new java.util.HashMap<>();
        for (QueuedJob job : queue.order(nowMillis)) {
            if (head == null) {
                Decision d = place(fleet, job, nowMillis, misses);
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
                    List<RunningJob> victims = victims(fleet, job, running, taken, nowMillis);
                    if (!victims.isEmpty()) {
                        preempt(result, job, victims, taken);
                        reason = "preempting " + victims.size() + " lower-priority job(s), which checkpoint first";
                    } else {
                        reason = yieldWithin(fleet, job, running, las, nowMillis, result, taken, noVictims, reason);
                    }
                } else {
                    reason = "waiting for preempted jobs to checkpoint and stop";
                }
                if (queue.overSoftQuota(job)) {
                    reason = "over its tenant's soft quota; " + reason;
                }
                result.waiting(job, reason);
                Shadow shadow = shadow(fleet, job, running, nowMillis);
                result.shadowMillis = shadow.atMillis();
                result.reservedPlan = shadow.plan();
                plan = shadow.plan();
                continue;
            }
            Decision d = place(fleet, job, nowMillis, misses);
            if (!d.isPlaced()) {
                if (d.code() == Status.Code.UNRESOLVABLE) {
                    result.unresolvable(job, d.summary());
                    continue;
                }
                String reason = d.summary();
                if (preempting.contains(job.jobId())) {
                    reason = "waiting for preempted jobs to checkpoint and stop";
                } else if (result.preemptions().size() < MAX_PREEMPTORS) {
                    reason = yieldWithin(fleet, job, running, las, nowMillis, result, taken, noVictims, reason);
                }
                result.waiting(job, reason);
                continue;
            }
            long estimate = job.runtimeEstimateSeconds() > 0 ? job.runtimeEstimateSeconds() : defaultEstimateSeconds;
            long ends = nowMillis + estimate * 1000;
            // a job that yields to the head's class is no threat to the head's start: the head takes its GPUs
            // back by least attained service once the job has run past the head's level
            boolean yieldsToHead = las.enabled() && job.yields() && job.priority() == head.priority();
            if (ends <= result.shadowMillis || yieldsToHead || !overlaps(d.assignments(), plan, true)) {
                result.placed(job, d, true);
                queue.remove(job.jobId());
                continue;
            }
            for (Assignment a : d.assignments()) {
                fleet.unreserve(a.allocationId());
            }
            Decision elsewhere = placeAroundPlan(fleet, job, plan, nowMillis);
            if (elsewhere != null) {
                result.placed(job, elsewhere, true);
                queue.remove(job.jobId());
            } else {
                result.waiting(job, "fits now, but would delay the reserved start of " + head.jobId()
                        + " (backfill needs a runtime estimate that ends before it)");
            }
        }
        return result;
    }

    /** The head's reservation: when it starts at the latest by estimates, and the hosts and GPUs it gets then. */
    record Shadow(long atMillis, List<Assignment> plan) {
    }

    /**
     * When the head will fit by estimates, and where: running jobs are lifted from the fleet in the
     * order they are expected to end (those ending together at once), and the framework is asked
     * where the head would go, with every filter, host by host. The first time it fits is the shadow
     * time; its assignments are the reservation. The GPU count over the head's models gives the first
     * time worth asking; from there the end times are searched by galloping and halving (freeing more
     * never makes the head fit less), so a pass asks O(log n) times and lifts about twice the jobs that
     * end by the shadow time, however many run. The fleet is left as it was. Long.MAX_VALUE and no reservation when running work never frees enough.
     */
    Shadow shadow(Fleet fleet, QueuedJob head, Collection<RunningJob> running, long nowMillis) {
        long from = countShadow(fleet, head, running, nowMillis);
        if (from == Long.MAX_VALUE || running.isEmpty()) {
            return new Shadow(Long.MAX_VALUE, List.of());
        }
        List<RunningJob> byEnd = new ArrayList<>(running);
        byEnd.sort(Comparator.comparingLong(RunningJob::expectedEndMillis).thenComparing(RunningJob::jobId));
        // the prefixes worth asking about: all jobs ending at or before one end time
        List<Integer> cuts = new ArrayList<>();
        for (int i = 1; i <= byEnd.size(); i++) {
            long end = byEnd.get(i - 1).expectedEndMillis();
            if ((i == byEnd.size() || byEnd.get(i).expectedEndMillis() != end) && end > nowMillis && end >= from) {
                cuts.add(i);
            }
        }
        if (cuts.isEmpty()) {
            return new Shadow(Long.MAX_VALUE, List.of());
        }
        Lifter lifter = new Lifter(fleet, byEnd);
        try {
            Decision first = lifter.explainAt(cuts.get(0), head, nowMillis);
            if (first.isPlaced()) {
                return new Shadow(byEnd.get(cuts.get(0) - 1).expectedEndMillis(), first.assignments());
            }
            // gallop (cuts 1, 2, 4, 8, ...) so that only about twice the jobs up to the shadow time are
            // ever lifted, then halve between the last cut that did not fit and the first that did
            int last = cuts.size() - 1;
            int lo = 0; // does not fit
            int hi = -1; // fits
            Decision found = null;
            for (int probe = 1; hi < 0; probe *= 2) {
                int at = Math.min(probe, last);
                if (at <= lo) {
                    return new Shadow(Long.MAX_VALUE, List.of());
                }
                Decision d = lifter.explainAt(cuts.get(at), head, nowMillis);
                if (d.isPlaced()) {
                    hi = at;
                    found = d;
                } else {
                    lo = at;
                }
            }
            while (hi - lo > 1) {
                int mid = (lo + hi) >>> 1;
                Decision d = lifter.explainAt(cuts.get(mid), head, nowMillis);
                if (d.isPlaced()) {
                    hi = mid;
                    found = d;
                } else {
                    lo = mid;
                }
            }
            return new Shadow(byEnd.get(cuts.get(hi) - 1).expectedEndMillis(), found.assignments());
        } finally {
            lifter.restore();
        }
    }

    /** Lifts the first k running jobs (by end) from the fleet, for any k in turn, and puts them back. */
    private final class Lifter {
        private final Fleet fleet;
        private final List<RunningJob> byEnd;
        private final List<List<Assignment>> lifted = new ArrayList<>();

        Lifter(Fleet fleet, List<RunningJob> byEnd) {
            this.fleet = fleet;
            this.byEnd = byEnd;
        }

        Decision explainAt(int k, QueuedJob head, long nowMillis) {
            while (lifted.size() < k) {
                List<Assignment> held = new ArrayList<>();
                for (String id : byEnd.get(lifted.size()).allocationIds()) {
                    fleet.unreserve(id).ifPresent(held::add);
                }
                lifted.add(held);
            }
            while (lifted.size() > k) {
                lifted.remove(lifted.size() - 1).forEach(fleet::reserve);
            }
            return framework.explain(fleet, head.request(), nowMillis);
        }

        void restore() {
            while (!lifted.isEmpty()) {
                lifted.remove(lifted.size() - 1).forEach(fleet::reserve);
            }
        }
    }

    /**
     * The earliest time the head could fit by GPU counts alone (milli over its allowed models): a
     * lower bound on the shadow time, since a placement needs at least that many free GPUs.
     */
    long countShadow(Fleet fleet, QueuedJob head, Collection<RunningJob> running, long nowMillis) {
        PlacementRequest r = head.request();
        long free = freeMilli(fleet, r);
        long need = head.gpuMilli();
        if (free >= need) {
            return nowMillis;
        }
        List<RunningJob> byEnd = new ArrayList<>(running);
        byEnd.sort(Comparator.comparingLong(RunningJob::expectedEndMillis));
        for (RunningJob j : byEnd) {
            free += usable(fleet, r, j);
            if (free >= need) {
                return j.expectedEndMillis();
            }
        }
        return Long.MAX_VALUE;
    }

    /** Free GPU milli now on GPUs of the models the request accepts. */
    private static long freeMilli(Fleet fleet, PlacementRequest r) {
        long free = 0;
        for (NodeState n : fleet.nodes()) {
            for (int i = 0; i < n.gpuCount(); i++) {
                GpuState g = n.gpu(i);
                if (r.models().isEmpty() || r.models().contains(g.model())) {
                    free += g.freeMilli();
                }
            }
        }
        return free;
    }

    /**
     * Places a job while the head's reservation is held: its GPUs that are free now, and the CPU and
     * memory it asks on those hosts. Returns the placement when it takes none of the reserved GPUs,
     * else null (the fleet unchanged).
     */
    private Decision placeAroundPlan(Fleet fleet, QueuedJob job, List<Assignment> plan, long nowMillis) {
        List<Assignment> held = new ArrayList<>();
        try {
            for (Assignment p : plan) {
                Assignment hold = holdable(fleet, p);
                if (hold != null) {
                    fleet.reserve(hold);
                    held.add(hold);
                }
            }
            Decision d = framework.place(fleet, job.request(), nowMillis);
            if (!d.isPlaced()) {
                return null;
            }
            if (overlaps(d.assignments(), plan, false)) {
                for (Assignment a : d.assignments()) {
                    fleet.unreserve(a.allocationId());
                }
                return null;
            }
            return d;
        } finally {
            for (Assignment a : held) {
                fleet.unreserve(a.allocationId());
            }
        }
    }

    /** The part of a reserved assignment that can be held now (its GPUs free now), or null. */
    private static Assignment holdable(Fleet fleet, Assignment p) {
        NodeState node = fleet.node(p.nodeId()).orElse(null);
        if (node == null) {
            return null;
        }
        String id = "reservation:" + p.allocationId();
        int cpu = Math.max(0, Math.min(p.cpuMillis(), node.cpuFree()));
        long memory = Math.max(0, Math.min(p.memoryMib(), node.memoryFree()));
        if (p.isMig() || p.isFraction()) {
            Assignment hold = new Assignment(id, p.jobId(), p.tenant(), p.rank(), p.nodeId(), p.gpuIndices(),
                    p.migProfile(), p.migStart(), p.milliGpu(), cpu, memory);
            return fleet.conflict(hold) == null ? hold : null;
        }
        List<Integer> free = new ArrayList<>();
        for (int index : p.gpuIndices()) {
            GpuState g = node.gpuByIndex(index);
            if (g != null && g.isWholeFree()) {
                free.add(index);
            }
        }
        if (free.isEmpty()) {
            return null; // nothing of it is free now; CPU and memory alone are left to the overlap check
        }
        return Assignment.whole(id, p.jobId(), p.tenant(), p.rank(), p.nodeId(), free, cpu, memory);
    }

    /**
     * Whether these assignments take a GPU the reservation needs; with {@code sharedHost}, also any
     * CPU or memory on a host where the reservation asks for some (conservative: capacities at the
     * shadow time are not projected).
     */
    static boolean overlaps(List<Assignment> assignments, List<Assignment> plan, boolean sharedHost) {
        for (Assignment a : assignments) {
            for (Assignment p : plan) {
                if (!a.nodeId().equals(p.nodeId())) {
                    continue;
                }
                for (int index : a.gpuIndices()) {
                    if (p.gpuIndices().contains(index)) {
                        return true;
                    }
                }
                if (sharedHost && (a.cpuMillis() > 0 || a.memoryMib() > 0) && (p.cpuMillis() > 0 || p.memoryMib() > 0)) {
                    return true;
                }
            }
        }
        return false;
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
     * At most this many queued jobs start preemptions in one pass: each choice asks the framework once per
     * candidate victim, and what they free is placed in the next passes anyway.
     */
    static final int MAX_PREEMPTORS = 16;
    /** At most this many running jobs are tried as one preemptor's victims (most served first). */
    static final int MAX_CANDIDATES = 64;

    /** Records a preemption, its victims taken from now on in this pass. */
    private static void preempt(PassResult result, QueuedJob job, List<RunningJob> victims, Set<String> taken) {
        result.preempt(job, victims);
        victims.forEach(v -> taken.add(v.jobId()));
    }

    /**
     * Lets a job that does not fit take GPUs from more-served jobs of its class ({@link Las}), when there are
     * such victims; returns the reason it waits: the yielding under way, or {@code reason} as it was.
     */
    private String yieldWithin(Fleet fleet, QueuedJob job, Collection<RunningJob> running, Las las, long nowMillis,
            PassResult result, Set<String> taken, java.util.Map<List<Object>, Integer> noVictims, String reason) {
        if (!las.enabled()) {
            return reason;
        }
        List<RunningJob> victims = lasVictims(fleet, job, running, taken, las, nowMillis, noVictims);
        if (victims.isEmpty()) {
            return reason;
        }
        preempt(result, job, victims, taken);
        return "preempting " + victims.size() + " job(s) of its class that received more GPU service (least"
                + " attained service first), which checkpoint first";
    }

    /**
     * The running jobs of {@code job}'s class that {@link Las} lets it preempt, whose stop would let it fit:
     * the most served first (then least work lost since their checkpoint), at most {@link #MAX_CANDIDATES}
     * tried, none already chosen in this pass ({@code taken}); only those needed. Empty when they would not
     * make room. Leaves the fleet as it was.
     */
    List<RunningJob> lasVictims(Fleet fleet, QueuedJob job, Collection<RunningJob> running, Set<String> taken, Las las,
            long nowMillis) {
        return lasVictims(fleet, job, running, taken, las, nowMillis, new java.util.HashMap<>());
    }

    /**
     * As above; {@code none} remembers, by request shape, the lowest level at which a job found no victims in
     * this pass: a job of that shape ranked at that level or above finds none either (it may preempt fewer
     * jobs, and victims are only ever taken), so it is not asked again.
     */
    private List<RunningJob> lasVictims(Fleet fleet, QueuedJob job, Collection<RunningJob> running, Set<String> taken,
            Las las, long nowMillis, java.util.Map<List<Object>, Integer> none) {
        List<Object> shape = shape(job.request());
        int level = las.level(job, nowMillis);
        Integer noneFrom = none.get(shape);
        if (noneFrom != null && level >= noneFrom) {
            return List.of();
        }
        List<RunningJob> found = chooseLasVictims(fleet, job, running, taken, las, nowMillis);
        if (found.isEmpty()) {
            none.merge(shape, level, Math::min);
        }
        return found;
    }

    private List<RunningJob> chooseLasVictims(Fleet fleet, QueuedJob job, Collection<RunningJob> running,
            Set<String> taken, Las las, long nowMillis) {
        List<RunningJob> candidates = new ArrayList<>();
        for (RunningJob r : running) {
            if (!taken.contains(r.jobId()) && las.mayPreempt(job, r, nowMillis)) {
                candidates.add(r);
            }
        }
        if (candidates.isEmpty()) {
            return List.of();
        }
        candidates.sort(Comparator.comparingDouble((RunningJob r) -> -r.attainedAt(nowMillis))
                .thenComparingLong(r -> r.lostWorkAt(nowMillis)).thenComparing(RunningJob::jobId));
        return chooseVictims(fleet, job, candidates.subList(0, Math.min(MAX_CANDIDATES, candidates.size())),
                nowMillis);
    }

    /**
     * The lower-class preemptible jobs whose stop would let {@code job} fit: the cheapest to stop
     * first (lowest class, then least work lost since their last checkpoint). Empty when even all of
     * them would not make room, or {@code job} is LOW. Leaves the fleet as it was.
     */
    List<RunningJob> victims(Fleet fleet, QueuedJob job, Collection<RunningJob> running, Set<String> taken,
            long nowMillis) {
        if (job.priority() == PriorityClass.LOW) {
            return List.of();
        }
        List<RunningJob> candidates = new ArrayList<>();
        for (RunningJob r : running) {
            if (r.preemptible() && r.priority().ordinal() < job.priority().ordinal() && !taken.contains(r.jobId())) {
                candidates.add(r);
            }
        }
        if (candidates.isEmpty()) {
            return List.of();
        }
        candidates.sort(Comparator.comparingInt((RunningJob r) -> r.priority().ordinal())
                .thenComparingLong(r -> r.lostWorkAt(nowMillis)).thenComparing(RunningJob::jobId));
        return chooseVictims(fleet, job, candidates, nowMillis);
    }

    /** Lifts candidates in order until {@code job} fits, then keeps only those needed; empty if it never fits. */
    private List<RunningJob> chooseVictims(Fleet fleet, QueuedJob job, List<RunningJob> candidates, long nowMillis) {
        // GPU milli counts bound from below what must be free before the framework is worth asking (not for
        // MIG slices, whose room milli does not measure): a job that all candidates together cannot make room
        // for costs no framework call, and one that can costs calls only once enough is lifted
        boolean counted = job.request().kind() != PlacementRequest.Kind.MIG;
        long need = job.gpuMilli();
        long room = counted ? freeMilli(fleet, job.request()) : 0;
        if (counted) {
            long all = room;
            for (RunningJob victim : candidates) {
                all += usable(fleet, job.request(), victim);
            }
            if (all < need) {
                return List.of();
            }
        }
        List<Assignment> lifted = new ArrayList<>();
        List<RunningJob> chosen = new ArrayList<>();
        try {
            for (RunningJob victim : candidates) {
                if (counted) {
                    room += usable(fleet, job.request(), victim);
                }
                for (String id : victim.allocationIds()) {
                    fleet.unreserve(id).ifPresent(lifted::add);
                }
                chosen.add(victim);
                if ((!counted || room >= need) && framework.explain(fleet, job.request(), nowMillis).isPlaced()) {
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
