package dev.gpucloud.scheduler.framework;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * One scheduling cycle per job, after the Kubernetes scheduling framework: PreFilter the job, then
 * for each worker Filter hosts and Score the feasible ones, Reserve the best; a multi-host RDMA gang
 * first picks its fabric, fewest leaves then fewest spines, over the hosts that pass every filter.
 * Permit sees the whole gang; any worker without a place unreserves them all, so a gang never
 * half-starts. Binding (telling the hosts) is the caller's: the service writes node.commands, the
 * simulator starts its clocks. Not thread-safe; one cycle at a time against one {@link Fleet}.
 */
public final class PlacementFramework {

    private final Profile profile;

    public PlacementFramework(Profile profile) {
        this.profile = profile;
    }

    public Profile profile() {
        return profile;
    }

    /** Places every worker and reserves them in the fleet, or reserves nothing and says why. */
    public Decision place(Fleet fleet, PlacementRequest request, long nowMillis) {
        CycleState state = new CycleState(fleet, nowMillis, profile);
        for (Plugins.PreFilter p : profile.preFilters()) {
            Status s = p.preFilter(state, request);
            if (!s.isSuccess()) {
                return s.code() == Status.Code.UNRESOLVABLE ? Decision.unresolvable(s.reason())
                        : Decision.unschedulable(List.of(s.reason()));
            }
        }
        if (fleet.size() == 0) {
            return Decision.unschedulable(List.of("no hosts have reported inventory"));
        }
        if (request.capacity() == CapacityPreference.SPOT_PREFERRED) {
            Decision onSpot = cycle(state, request.withCapacity(CapacityPreference.SPOT));
            if (onSpot.isPlaced()) {
                return onSpot;
            }
        }
        return cycle(state, request);
    }

    /** What {@link #place} would do, leaving the fleet as it was. */
    public Decision explain(Fleet fleet, PlacementRequest request, long nowMillis) {
        Decision d = place(fleet, request, nowMillis);
        for (Assignment a : d.assignments()) {
            fleet.unreserve(a.allocationId());
        }
        return d;
    }

    private Decision cycle(CycleState state, PlacementRequest r) {
        List<Assignment> reserved = new ArrayList<>(r.workers());
        Fleet fleet = state.fleet();
        if (r.multiHostRdma()) {
            List<NodeState> hosts = new ArrayList<>(r.workers());
            List<String> why = planGang(state, r, hosts);
            if (why != null) {
                return Decision.unschedulable(why);
            }
            for (int rank = 0; rank < r.workers(); rank++) {
                Assignment a = GpuPicker.pick(r, hosts.get(rank), rank);
                if (a == null) {
                    rollback(fleet, reserved);
                    return Decision.unschedulable(List.of("worker " + rank + " lost its place while reserving"));
                }
                fleet.reserve(a);
                reserved.add(a);
            }
        } else {
            Selector selector = new Selector(state, r);
            for (int rank = 0; rank < r.workers(); rank++) {
                NodeState node = selector.select();
                Assignment a = node == null ? null : GpuPicker.pick(r, node, rank);
                if (a == null) {
                    rollback(fleet, reserved);
                    List<String> reasons = diagnose(state, r);
                    if (r.workers() > 1) {
                        reasons.add(0, "worker " + rank + " of " + r.workers()
                                + " has no place (a gang starts all workers or none)");
                    }
                    return Decision.unschedulable(reasons);
                }
                fleet.reserve(a);
                reserved.add(a);
            }
        }
        for (Plugins.Permit p : profile.permits()) {
            Status s = p.permit(state, r, reserved);
            if (!s.isSuccess()) {
                rollback(fleet, reserved);
                return Decision.unschedulable(List.of(s.reason()));
            }
        }
        return Decision.placed(reserved);
    }

    private static void rollback(Fleet fleet, List<Assignment> reserved) {
        for (Assignment a : reserved) {
            fleet.unreserve(a.allocationId());
        }
    }

    /** The first filter that rejects the host, or SUCCESS. */
    Status filter(CycleState state, PlacementRequest r, NodeState node) {
        List<Plugins.Filter> filters = profile.filters();
        for (int i = 0, n = filters.size(); i < n; i++) {
            Status s = filters.get(i).filter(state, r, node);
            if (!s.isSuccess()) {
                return s;
            }
        }
        return Status.SUCCESS;
    }

    int score(CycleState state, PlacementRequest r, NodeState node) {
        List<Plugins.Score> scores = profile.scores();
        int total = 0;
        for (int i = 0, n = scores.size(); i < n; i++) {
            total += profile.weight(i) * scores.get(i).score(state, r, node);
        }
        return total;
    }

    /** Visits candidates fullest first and keeps the best-scoring of the first feasible ones. */
    private final class Selector implements Predicate<NodeState> {
        private final CycleState state;
        private final PlacementRequest r;
        private NodeState best;
        private int bestScore;
        private int feasible;

        Selector(CycleState state, PlacementRequest r) {
            this.state = state;
            this.r = r;
        }

        NodeState select() {
            best = null;
            bestScore = Integer.MIN_VALUE;
            feasible = 0;
            Fleet fleet = state.fleet();
            switch (r.kind()) {
                case WHOLE -> fleet.visitByFreeGpus(r.models(), r.gpusPerWorker(), this);
                case MIG -> fleet.visitMig(this);
                case FRACTION -> {
                    fleet.visitPartial(this);
                    if (feasible < profile.feasibleToScore()) {
                        fleet.visitByFreeGpus(r.models(), 1, this);
                    }
                }
                default -> throw new IllegalStateException(r.kind().toString());
            }
            return best;
        }

        @Override
        public boolean test(NodeState node) {
            if (!filter(state, r, node).isSuccess()) {
                return true;
            }
            int s = score(state, r, node);
            if (s > bestScore || (s == bestScore && node.id().compareTo(best.id()) < 0)) {
                best = node;
                bestScore = s;
            }
            return ++feasible < profile.feasibleToScore();
        }
    }

    /** How many workers of the request this host can take now, by GPUs, CPU and memory. */
    static int workersFit(PlacementRequest r, NodeState node) {
        int fit;
        if (r.kind() == PlacementRequest.Kind.WHOLE) {
            int g = r.gpusPerWorker();
            int n = node.gpuCount();
            int[] island = new int[n + 1];
            int free = 0;
            for (int i = 0; i < n; i++) {
                GpuState gpu = node.gpu(i);
                if (gpu.isWholeFree() && r.accepts(gpu)) {
                    free++;
                    island[gpu.island() >= 0 && gpu.island() < n ? gpu.island() : n]++;
                }
            }
            if (r.nvlink()) {
                fit = 0;
                for (int c : island) {
                    fit += c / g;
                }
            } else {
                fit = free / g;
            }
        } else {
            fit = 1;
        }
        if (r.cpuMillis() > 0) {
            fit = Math.min(fit, node.cpuFree() / r.cpuMillis());
        }
        if (r.memoryMib() > 0) {
            fit = (int) Math.min(fit, node.memoryFree() / r.memoryMib());
        }
        return fit;
    }

    private record Candidate(NodeState node, int fit) {
    }

    private record Choice(List<List<Candidate>> leaves, int leafCount, int spineCount, int slack) {
        boolean betterThan(Choice o) {
            if (o == null) {
                return true;
            }
            if (leafCount != o.leafCount) {
                return leafCount < o.leafCount;
            }
            if (spineCount != o.spineCount) {
                return spineCount < o.spineCount;
            }
            return slack < o.slack;
        }
    }

    /**
     * Picks the hosts of a multi-host RDMA gang, rank by rank into {@code hosts}: one fabric; within
     * it one leaf if one can hold the gang (the tightest such leaf), else the fewest leaves under one
     * spine, else the fewest leaves across spines. Returns null when planned, else the reasons.
     */
    private List<String> planGang(CycleState state, PlacementRequest r, List<NodeState> hosts) {
        // one pass over the hosts with room, grouped by leaf; the tree above the leaves is small
        Map<String, List<Candidate>> byLeaf = new HashMap<>();
        Map<String, Integer> rejected = new HashMap<>();
        state.fleet().visitByFreeGpus(r.models(), r.gpusNeeded(), node -> {
            Status s = filter(state, r, node);
            if (!s.isSuccess()) {
                rejected.merge(s.reason(), 1, Integer::sum);
                return true;
            }
            int fit = workersFit(r, node);
            if (fit > 0) {
                String key = node.fabric() + "\u0000" + node.spine() + "\u0000" + node.leaf();
                List<Candidate> leaf = byLeaf.get(key);
                if (leaf == null) {
                    leaf = new ArrayList<>(8);
                    byLeaf.put(key, leaf);
                }
                leaf.add(new Candidate(node, fit));
            }
            return true;
        });
        Map<String, Map<String, Map<String, List<Candidate>>>> tree = new TreeMap<>();
        for (List<Candidate> leaf : byLeaf.values()) {
            NodeState n = leaf.get(0).node();
            tree.computeIfAbsent(n.fabric(), k -> new TreeMap<>()).computeIfAbsent(n.spine(), k -> new TreeMap<>())
                    .put(n.leaf(), leaf);
        }
        int need = r.workers();
        Choice best = null;
        Map<String, Integer> roomByFabric = new TreeMap<>();
        for (var fabric : tree.entrySet()) {
            List<List<Candidate>> all = new ArrayList<>();
            int room = 0;
            for (var spine : fabric.getValue().entrySet()) {
                List<List<Candidate>> leaves = new ArrayList<>(spine.getValue().values());
                all.addAll(leaves);
                Choice c = fewestLeaves(leaves, need, 1);
                if (c != null && c.betterThan(best)) {
                    best = c;
                }
                for (List<Candidate> leaf : leaves) {
                    room += fit(leaf);
                }
            }
            roomByFabric.put(fabric.getKey(), room);
            if (best == null || best.leafCount > 1) {
                Choice c = fewestLeaves(all, need, -1);
                if (c != null && c.betterThan(best)) {
                    best = c;
                }
            }
        }
        if (best == null) {
            List<String> reasons = new ArrayList<>();
            reasons.add("no RDMA fabric has room for all " + need + " workers (a gang starts all workers or none)");
            roomByFabric.forEach((f, room) -> reasons.add("fabric " + f + ": room for " + room + " of " + need + " workers"));
            reasons.addAll(counted(rejected));
            if (roomByFabric.isEmpty() && rejected.isEmpty()) {
                reasons.add(state.fleet().size() + " hosts: fewer than " + r.gpusNeeded() + " free GPUs");
            }
            return reasons;
        }
        int left = need;
        for (List<Candidate> leaf : best.leaves()) {
            List<Candidate> sorted = new ArrayList<>(leaf);
            sorted.sort(Comparator.comparingInt((Candidate c) -> -c.fit()).thenComparing(c -> c.node().id()));
            for (Candidate c : sorted) {
                for (int k = 0; k < c.fit() && left > 0; k++, left--) {
                    hosts.add(c.node());
                }
            }
        }
        return null;
    }

    private static int fit(List<Candidate> leaf) {
        int sum = 0;
        for (Candidate c : leaf) {
            sum += c.fit();
        }
        return sum;
    }

    /** The fewest leaves (largest first) that hold {@code need} workers, or the tightest single leaf. */
    private static Choice fewestLeaves(List<List<Candidate>> leaves, int need, int spines) {
        List<Candidate> tightest = null;
        int tightestRoom = Integer.MAX_VALUE;
        for (List<Candidate> leaf : leaves) {
            int room = fit(leaf);
            if (room >= need && room < tightestRoom) {
                tightest = leaf;
                tightestRoom = room;
            }
        }
        if (tightest != null) {
            return new Choice(List.of(tightest), 1, 1, tightestRoom - need);
        }
        List<List<Candidate>> sorted = new ArrayList<>(leaves);
        sorted.sort(Comparator.comparingInt((List<Candidate> l) -> -fit(l)));
        List<List<Candidate>> taken = new ArrayList<>();
        int room = 0;
        java.util.Set<String> spineSet = new java.util.HashSet<>();
        for (List<Candidate> leaf : sorted) {
            taken.add(leaf);
            room += fit(leaf);
            spineSet.add(leaf.get(0).node().spine());
            if (room >= need) {
                return new Choice(taken, taken.size(), spines > 0 ? spines : spineSet.size(), room - need);
            }
        }
        return null;
    }

    /**
     * Why no host takes one worker: each host's first failing filter, counted ("12 hosts: other
     * RDMA fabric"), largest count first.
     */
    List<String> diagnose(CycleState state, PlacementRequest r) {
        Map<String, Integer> counts = new HashMap<>();
        for (NodeState node : state.fleet().nodes()) {
            Status s = filter(state, r, node);
            counts.merge(s.isSuccess() ? "fits one worker but not the whole job" : s.reason(), 1, Integer::sum);
        }
        return counted(counts);
    }

    private static List<String> counted(Map<String, Integer> counts) {
        List<String> lines = new ArrayList<>();
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> lines.add(e.getValue() + (e.getValue() == 1 ? " host: " : " hosts: ") + e.getKey()));
        return lines;
    }

    /**
     * Could this job ever run on this fleet, were every host empty and healthy? Used at submit: a
     * job no host could ever take (a gang larger than any fabric, a MIG profile no GPU offers) is
     * rejected then, not left pending for ever. Judged over the hosts with a GPU model the job
     * accepts: when there is none yet, the job is admitted (such hosts may join) and waits.
     */
    public Status everFits(Fleet fleet, PlacementRequest r) {
        CycleState state = new CycleState(fleet, 0, profile);
        for (Plugins.PreFilter p : profile.preFilters()) {
            Status s = p.preFilter(state, r);
            if (!s.isSuccess()) {
                return Status.unresolvable(s.plugin(), s.reason());
            }
        }
        boolean anyOfModel = false;
        for (NodeState node : fleet.nodes()) {
            for (int i = 0; i < node.gpuCount() && !anyOfModel; i++) {
                anyOfModel = r.models().isEmpty() || r.models().contains(node.gpu(i).model());
            }
        }
        if (!anyOfModel) {
            return Status.SUCCESS;
        }
        Map<String, Integer> byFabric = new LinkedHashMap<>();
        int anywhere = 0;
        boolean sawFit = false;
        for (NodeState node : fleet.nodes()) {
            int fit = Capacity.staticWorkers(r, node);
            if (fit > 0) {
                sawFit = true;
                anywhere += fit;
                if (node.fabric() != null) {
                    byFabric.merge(node.fabric(), fit, Integer::sum);
                }
            }
        }
        if (!sawFit) {
            return Status.unresolvable("Admission", "no host of the fleet can take even one worker of this shape");
        }
        if (r.multiHostRdma()) {
            int most = byFabric.values().stream().mapToInt(Integer::intValue).max().orElse(0);
            if (most < r.workers()) {
                return Status.unresolvable("Admission", "gang of " + r.workers()
                        + " workers is larger than any RDMA fabric (the largest holds " + most + ")");
            }
        } else if (anywhere < r.workers()) {
            return Status.unresolvable("Admission", "gang of " + r.workers() + " workers is larger than the fleet ("
                    + anywhere + ")");
        }
        return Status.SUCCESS;
    }
}
