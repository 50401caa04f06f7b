package dev.gpucloud.scheduler.framework;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.cluster.RdmaLeaf;
import dev.gpucloud.scheduler.framework.plugins.PackingScore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
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
    /** The Packing score's weight, or -1 when the profile has none (or a negative weight): no early stop. */
    private final int packingWeight;
    /** Off only in tests that compare the early stop with scoring every candidate. */
    boolean stopEarly = true;

    public PlacementFramework(Profile profile) {
        this.profile = profile;
        int packing = -1;
        boolean negative = false;
        for (int i = 0; i < profile.scores().size(); i++) {
            negative |= profile.weight(i) < 0;
            if (profile.scores().get(i) instanceof PackingScore && packing < 0) {
                packing = profile.weight(i);
            }
        }
        this.packingWeight = negative ? -1 : packing;
    }

    /** The most the score plugins other than (the first) Packing can add together for this request. */
    private int othersMax(CycleState state, PlacementRequest r) {
        int sum = 0;
        boolean packingSeen = false;
        for (int i = 0; i < profile.scores().size(); i++) {
            Plugins.Score score = profile.scores().get(i);
            if (score instanceof PackingScore && !packingSeen) {
                packingSeen = true;
            } else {
                sum += profile.weight(i) * Math.max(0, Math.min(100, score.maxScore(state, r)));
            }
        }
        return sum;
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

        private final int othersMax;

        Selector(CycleState state, PlacementRequest r) {
            this.state = state;
            this.r = r;
            this.othersMax = stopEarly && packingWeight >= 0 && r.kind() == PlacementRequest.Kind.MIG
                    ? othersMax(state, r) : Integer.MAX_VALUE / 2;
        }

        NodeState select() {
            best = null;
            bestScore = Integer.MIN_VALUE;
            feasible = 0;
            Fleet fleet = state.fleet();
            switch (r.kind()) {
                case WHOLE -> fleet.visitByFreeGpus(r.models(), r.gpusPerWorker(), this);
                case MIG -> fleet.visitMig(r.migProfile(), this);
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
            if (best != null && othersMax < Integer.MAX_VALUE / 2
                    && packingWeight * node.migBestPercent(r.migProfile()) + othersMax < bestScore) {
                // MIG hosts come fullest first and Packing scores exactly that fullness: no host from
                // here on can beat the best, so the first feasible hosts would choose the same
                return false;
            }
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
            int[] island = r.nvlink() ? new int[n + 1] : null;
            int free = 0;
            for (int i = 0; i < n; i++) {
                GpuState gpu = node.gpu(i);
                if (gpu.isWholeFree() && r.accepts(gpu)) {
                    free++;
                    if (island != null) {
                        island[gpu.island() >= 0 && gpu.island() < n ? gpu.island() : n]++;
                    }
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
     *
     * <p>Reads the fleet's per-leaf counts of hosts by free GPUs first: a leaf whose bound cannot hold
     * the gang is never a single-leaf candidate, a leaf with no room is never looked into, and a
     * fabric whose bound needs more leaves than the best plan so far is skipped. Only the hosts of
     * the remaining leaves go through the filters. The plan is the one {@link #planGangByScan} makes;
     * when there is none, that scan also gives the reasons.
     */
    private List<String> planGang(CycleState state, PlacementRequest r, List<NodeState> hosts) {
        List<RdmaLeaf> leaves = state.fleet().rdmaLeaves();
        int n = leaves.size();
        int need = r.workers();
        int g = r.gpusNeeded();
        int[] bound = new int[n];
        int[] room = new int[n];
        for (int i = 0; i < n; i++) {
            bound[i] = leaves.get(i).roomBound(g);
            room[i] = bound[i] == 0 ? 0 : -1;
        }
        // a single leaf that holds the gang beats any plan of more leaves: the first tightest one
        int single = -1;
        int singleRoom = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            if (bound[i] >= need) {
                int e = exactRoom(state, r, leaves.get(i), room, i);
                if (e >= need && e < singleRoom) {
                    single = i;
                    singleRoom = e;
                }
            }
        }
        if (single >= 0) {
            assign(state, r, leaves, new int[] {single}, 1, need, hosts);
            return null;
        }
        int[] best = null;
        int bestLeaves = Integer.MAX_VALUE;
        int bestSpines = Integer.MAX_VALUE;
        int bestSlack = Integer.MAX_VALUE;
        long[] keys = new long[n];
        int[] taken = new int[n];
        int[] acrossSpines = new int[n];
        boolean[] used = new boolean[n];
        for (int f = 0; f < n; ) {
            int fEnd = f;
            while (fEnd < n && leaves.get(fEnd).fabricOrdinal() == leaves.get(f).fabricOrdinal()) {
                fEnd++;
            }
            // no plan in this fabric takes fewer leaves than the greedy over the bounds
            int lowerBound = greedyCount(bound, f, fEnd, need, keys);
            if (lowerBound != Integer.MAX_VALUE && lowerBound <= bestLeaves) {
                // the plan across spines first: a spine needing more leaves than it can never win
                int across = lazyGreedy(state, r, leaves, bound, room, f, fEnd, need, keys, acrossSpines, used);
                int limit = Math.min(bestLeaves, across > 0 ? across : Integer.MAX_VALUE);
                for (int s = f; s < fEnd; ) {
                    int sEnd = s;
                    while (sEnd < fEnd && leaves.get(sEnd).spineOrdinal() == leaves.get(s).spineOrdinal()) {
                        sEnd++;
                    }
                    int atLeast = greedyCount(bound, s, sEnd, need, keys);
                    // a spine can win only with fewer leaves, or as many and less slack than a one-spine best
                    if (atLeast < limit || (atLeast == limit && !(bestLeaves == limit && bestSpines == 1
                            && bestSlack == 0))) {
                        int count = lazyGreedy(state, r, leaves, bound, room, s, sEnd, need, keys, taken, used);
                        if (count > 0) {
                            int slack = slack(room, taken, count, need);
                            if (count < bestLeaves || (count == bestLeaves && (1 < bestSpines
                                    || (1 == bestSpines && slack < bestSlack)))) {
                                best = Arrays.copyOf(taken, count);
                                bestLeaves = count;
                                bestSpines = 1;
                                bestSlack = slack;
                                limit = Math.min(limit, bestLeaves);
                            }
                        }
                    }
                    s = sEnd;
                }
                if (bestLeaves > 1 && across > 0) {
                    int spines = distinctSpines(leaves, acrossSpines, across);
                    int slack = slack(room, acrossSpines, across, need);
                    if (across < bestLeaves || (across == bestLeaves && (spines < bestSpines
                            || (spines == bestSpines && slack < bestSlack)))) {
                        best = Arrays.copyOf(acrossSpines, across);
                        bestLeaves = across;
                        bestSpines = spines;
                        bestSlack = slack;
                    }
                }
            }
            f = fEnd;
        }
        if (best == null) {
            return planGangByScan(state, r, hosts);
        }
        assign(state, r, leaves, best, best.length, need, hosts);
        return null;
    }

    /** Workers of {@code r} the leaf's hosts take now, through every filter; memoised in {@code room}. */
    private int exactRoom(CycleState state, PlacementRequest r, RdmaLeaf leaf, int[] room, int i) {
        if (room[i] >= 0) {
            return room[i];
        }
        int g = r.gpusNeeded();
        int sum = 0;
        for (int h = 0, count = leaf.hostCount(); h < count; h++) {
            NodeState node = leaf.host(h);
            if (node.wholeFree() >= g && filter(state, r, node).isSuccess()) {
                sum += Math.max(0, workersFit(r, node));
            }
        }
        room[i] = sum;
        return sum;
    }

    /** How many of the leaves in [from, to) the largest-first greedy takes to reach {@code need}; MAX_VALUE when never. */
    private static int greedyCount(int[] value, int from, int to, int need, long[] keys) {
        int k = 0;
        long total = 0;
        for (int i = from; i < to; i++) {
            if (value[i] > 0) {
                keys[k++] = -(long) value[i];
                total += value[i];
            }
        }
        if (total < need) {
            return Integer.MAX_VALUE;
        }
        Arrays.sort(keys, 0, k);
        long sum = 0;
        for (int j = 0; j < k; j++) {
            sum -= keys[j];
            if (sum >= need) {
                return j + 1;
            }
        }
        return Integer.MAX_VALUE;
    }

    /**
     * The largest-first greedy over the leaves in [from, to) by their exact room (ties in tree order)
     * into {@code taken}: how many it takes to hold {@code need}, or 0 when they cannot. Looks into a
     * leaf's hosts only while its bound could still put it ahead of the leaves already measured.
     */
    private int lazyGreedy(CycleState state, PlacementRequest r, List<RdmaLeaf> leaves, int[] bound, int[] room,
            int from, int to, int need, long[] keys, int[] taken, boolean[] used) {
        int k = 0;
        long total = 0;
        for (int i = from; i < to; i++) {
            if (bound[i] > 0) {
                keys[k++] = ((long) (Integer.MAX_VALUE - bound[i]) << 32) | i;
                total += bound[i];
            }
        }
        if (total < need) {
            return 0;
        }
        Arrays.sort(keys, 0, k);
        int measured = 0;
        int count = 0;
        long sum = 0;
        while (sum < need) {
            int best;
            while (true) {
                best = -1;
                for (int j = 0; j < measured; j++) {
                    int i = (int) keys[j];
                    if (!used[i] && room[i] > 0 && (best < 0 || room[i] > room[best])) {
                        best = i; // keys are in tree order within equal bounds, but not across: compare indexes
                    } else if (!used[i] && room[i] > 0 && room[i] == room[best] && i < best) {
                        best = i;
                    }
                }
                if (measured < k) {
                    int next = (int) keys[measured];
                    if (best < 0 || bound[next] > room[best] || (bound[next] == room[best] && next < best)) {
                        exactRoom(state, r, leaves.get(next), room, next);
                        measured++;
                        continue;
                    }
                }
                break;
            }
            if (best < 0) {
                count = -count;
                break;
            }
            used[best] = true;
            taken[count++] = best;
            sum += room[best];
        }
        int size = Math.abs(count);
        for (int j = 0; j < size; j++) {
            used[taken[j]] = false;
        }
        return count > 0 ? count : 0;
    }

    private static int slack(int[] room, int[] taken, int count, int need) {
        int sum = 0;
        for (int j = 0; j < count; j++) {
            sum += room[taken[j]];
        }
        return sum - need;
    }

    private static int distinctSpines(List<RdmaLeaf> leaves, int[] taken, int count) {
        int distinct = 0;
        for (int j = 0; j < count; j++) {
            boolean seen = false;
            for (int k = 0; k < j && !seen; k++) {
                seen = leaves.get(taken[k]).spineOrdinal() == leaves.get(taken[j]).spineOrdinal();
            }
            distinct += seen ? 0 : 1;
        }
        return distinct;
    }

    /** Fills the ranks from the chosen leaves in order; within a leaf, the hosts that take most first, then by id. */
    private void assign(CycleState state, PlacementRequest r, List<RdmaLeaf> leaves, int[] chosen, int count, int need,
            List<NodeState> hosts) {
        int g = r.gpusNeeded();
        int left = need;
        for (int j = 0; j < count && left > 0; j++) {
            RdmaLeaf leaf = leaves.get(chosen[j]);
            int m = leaf.hostCount();
            long[] keys = new long[m];
            int k = 0;
            for (int h = 0; h < m; h++) {
                NodeState node = leaf.host(h);
                if (node.wholeFree() >= g && filter(state, r, node).isSuccess()) {
                    int fit = workersFit(r, node);
                    if (fit > 0) {
                        keys[k++] = ((long) (Integer.MAX_VALUE - fit) << 32) | h;
                    }
                }
            }
            Arrays.sort(keys, 0, k);
            for (int q = 0; q < k && left > 0; q++) {
                NodeState node = leaf.host((int) keys[q]);
                int fit = Integer.MAX_VALUE - (int) (keys[q] >>> 32);
                for (int w = 0; w < fit && left > 0; w++, left--) {
                    hosts.add(node);
                }
            }
        }
    }

    /** What {@link #planGang} would pick, by both ways (the index and the full scan), for tests. */
    List<List<NodeState>> gangPlans(Fleet fleet, PlacementRequest r, long nowMillis) {
        CycleState state = new CycleState(fleet, nowMillis, profile);
        List<NodeState> indexed = new ArrayList<>();
        List<NodeState> scanned = new ArrayList<>();
        if (planGang(state, r, indexed) != null) {
            indexed.clear();
        }
        if (planGangByScan(state, r, scanned) != null) {
            scanned.clear();
        }
        return List.of(indexed, scanned);
    }

    /**
     * The reference way to plan a gang, by visiting every host with room: the reasons when a gang
     * has no place, and what {@link #planGang} is tested against.
     */
    private List<String> planGangByScan(CycleState state, PlacementRequest r, List<NodeState> hosts) {
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
        for (Iterator<NodeState> it = fleet.nodes().iterator(); it.hasNext() && !anyOfModel; ) {
            NodeState node = it.next();
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
                int inFabric = node.fabric() == null ? 0 : byFabric.merge(node.fabric(), fit, Integer::sum);
                if (r.multiHostRdma() ? inFabric >= r.workers() : anywhere >= r.workers()) {
                    return Status.SUCCESS; // enough seen: the rest of the fleet cannot change the answer
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
