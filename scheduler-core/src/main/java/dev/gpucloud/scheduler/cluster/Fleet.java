package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.geometry.GpuAdmission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The scheduler's cluster model: hosts from gpu.inventory and node.events, and the assignments the
 * scheduler itself made. Hosts are indexed by GPU model and by how many whole GPUs they have free,
 * per MIG profile by how full their fullest GPU with a free start for it would be, and per RDMA leaf
 * by counts of hosts by free GPUs, all kept current on every reserve and release; so a decision
 * looks at the fullest hosts that can still take a job first (best fit) without scanning the fleet. An assignment may name a host that has not reported yet (after a restart);
 * it takes effect when the host appears. Not thread-safe: one owner applies changes in order.
 */
public final class Fleet {

    private static final int MAX_BUCKET = 64;

    private final Map<String, NodeState> byId = new TreeMap<>();
    private final List<NodeState> nodes = new ArrayList<>();
    private final Map<String, ModelIndex> byModel = new TreeMap<>();
    private final Bucket mixed = new Bucket();
    private final Bucket partial = new Bucket();
    private final Bucket migCapable = new Bucket();
    private final Map<String, Bucket[]> migByProfile = new HashMap<>();
    private final Map<String, Assignment> assignments = new LinkedHashMap<>();
    private final Map<String, List<Assignment>> byNode = new HashMap<>();
    private List<RdmaLeaf> rdmaLeaves = List.of();
    private boolean topologyDirty = true;
    private long version;
    private long heardFloorMillis = Long.MIN_VALUE;
    private long floorHeardSinceMillis = Long.MAX_VALUE;
    private long maxPricePerGpu = 1;
    /**
     * Operators' cordons by host id, with their reasons. Kept apart from the hosts, so that a cordon outlives its
     * host leaving and joining again, and may name a host before it is heard from.
     */
    private final Map<String, String> cordons = new TreeMap<>();
    private long minPricePerGpu = Long.MAX_VALUE;

    /** Adds a host or replaces its description, keeping its health and re-applying what it holds. */
    public List<Assignment> upsert(HostInventory inventory, long nowMillis) {
        NodeState previous = byId.get(inventory.nodeId());
        NodeState node = new NodeState(inventory);
        node.cordon = cordons.get(inventory.nodeId());
        List<Assignment> displaced = new ArrayList<>();
        if (previous != null) {
            node.lastHeardMillis = previous.lastHeardMillis;
            node.draining = previous.draining;
            node.interruptionDeadlineMillis = previous.interruptionDeadlineMillis;
            node.rebalanceAtMillis = previous.rebalanceAtMillis;
            node.lastCriticalXidMillis = previous.lastCriticalXidMillis;
            node.lastCriticalXid = previous.lastCriticalXid;
            unindex(previous);
            node.slot = previous.slot;
            nodes.set(previous.slot, node);
            if (!topologyDirty && previous.rdmaLeaf != null && node.fabric != null
                    && node.fabric.equals(previous.fabric) && node.spine.equals(previous.spine)
                    && node.leaf.equals(previous.leaf)) {
                node.rdmaLeaf = previous.rdmaLeaf;
                node.rdmaLeaf.maxGpus = Math.max(node.rdmaLeaf.maxGpus, node.gpus.length);
                List<NodeState> under = node.rdmaLeaf.hosts;
                under.set(under.indexOf(previous), node);
            } else if (previous.fabric != null || node.fabric != null) {
                topologyDirty = true;
            }
        } else {
            node.slot = nodes.size();
            nodes.add(node);
            topologyDirty |= node.fabric != null;
        }
        node.lastHeardMillis = Math.max(node.lastHeardMillis, nowMillis);
        maxPricePerGpu = Math.max(maxPricePerGpu, node.pricePerGpuMicros());
        minPricePerGpu = Math.min(minPricePerGpu, node.pricePerGpuMicros());
        byId.put(node.id, node);
        for (Assignment a : byNode.getOrDefault(node.id, List.of())) {
            if (fits(node, a) != null) {
                displaced.add(a);
            } else {
                apply(node, a, +1);
            }
        }
        for (Assignment a : displaced) {
            forget(a);
        }
        index(node);
        version++;
        return displaced;
    }

    /** Removes a host; returns the assignments that were on it (now lost) and forgets them. */
    public List<Assignment> remove(String nodeId) {
        NodeState node = byId.remove(nodeId);
        if (node != null) {
            unindex(node);
            topologyDirty |= node.fabric != null;
            NodeState last = nodes.remove(nodes.size() - 1);
            if (last != node) {
                last.slot = node.slot;
                nodes.set(node.slot, last);
            }
        }
        List<Assignment> lost = new ArrayList<>(byNode.getOrDefault(nodeId, List.of()));
        for (Assignment a : lost) {
            forget(a);
        }
        version++;
        return lost;
    }

    /**
     * Every host heard at {@code heardSinceMillis} or later counts as heard at {@code atMillis} at least, for
     * placement: the scheduler could not hear them meanwhile (see {@code HostLiveness.bridgeDeafness}). A host
     * never heard, heard only before, or whose heartbeat was declared lost, is not lifted.
     */
    public void heardFloor(long atMillis, long heardSinceMillis) {
        if (atMillis > heardFloorMillis || heardSinceMillis != floorHeardSinceMillis) {
            heardFloorMillis = Math.max(heardFloorMillis, atMillis);
            floorHeardSinceMillis = heardSinceMillis;
            version++;
        }
    }

    /** When a host last heard of counts as heard, for placement (see {@link #heardFloor}). */
    public long placementHeardMillis(NodeState node) {
        long last = node.lastHeardMillis;
        return last != NodeState.NEVER && last >= floorHeardSinceMillis ? Math.max(last, heardFloorMillis) : last;
    }

    public void heard(String nodeId, long atMillis) {
        NodeState node = byId.get(nodeId);
        if (node != null && atMillis > node.lastHeardMillis) {
            node.lastHeardMillis = atMillis;
        }
    }

    /** The host stopped answering: it takes no work until it is heard from again. */
    public void lost(String nodeId) {
        NodeState node = byId.get(nodeId);
        if (node != null) {
            node.lastHeardMillis = NodeState.NEVER;
            version++;
        }
    }

    /** A host's own drain (its agent's {@code DRAIN}/{@code UNDRAIN}); an operator's cordon stands apart from it. */
    public void drain(String nodeId, boolean draining) {
        NodeState node = byId.get(nodeId);
        if (node != null) {
            node.draining = draining;
            version++;
        }
    }

    /**
     * An operator keeps new work off the host until {@link #uncordon}; {@code reason} says why. The host need not
     * be known yet: it is cordoned when it joins.
     */
    public void cordon(String nodeId, String reason) {
        cordons.put(nodeId, java.util.Objects.requireNonNull(reason, "reason"));
        NodeState node = byId.get(nodeId);
        if (node != null) {
            node.cordon = reason;
            version++;
        }
    }

    /** Lifts an operator's cordon; false if the host had none. */
    public boolean uncordon(String nodeId) {
        boolean had = cordons.remove(nodeId) != null;
        NodeState node = byId.get(nodeId);
        if (node != null && node.cordon != null) {
            node.cordon = null;
            version++;
        }
        return had;
    }

    /** The operators' cordons, by host id. */
    public Map<String, String> cordons() {
        return java.util.Collections.unmodifiableMap(cordons);
    }

    /** Makes the cordons exactly {@code all} (what the database holds, at a takeover or while following). */
    public void replaceCordons(Map<String, String> all) {
        for (String nodeId : List.copyOf(cordons.keySet())) {
            if (!all.containsKey(nodeId)) {
                uncordon(nodeId);
            }
        }
        all.forEach((nodeId, reason) -> {
            if (!reason.equals(cordons.get(nodeId))) {
                cordon(nodeId, reason);
            }
        });
    }

    /** The jobs with a worker on the host, in id order. */
    public List<String> jobsOn(String nodeId) {
        java.util.TreeSet<String> jobs = new java.util.TreeSet<>();
        assignmentsOn(nodeId).forEach(a -> jobs.add(a.jobId()));
        return List.copyOf(jobs);
    }

    /** The cloud will reclaim the host at {@code deadlineMillis}: it takes no new work. */
    public void interruption(String nodeId, long deadlineMillis) {
        NodeState node = byId.get(nodeId);
        if (node != null) {
            node.interruptionDeadlineMillis = deadlineMillis;
            version++;
        }
    }

    public void rebalance(String nodeId, long atMillis) {
        NodeState node = byId.get(nodeId);
        if (node != null) {
            node.rebalanceAtMillis = atMillis;
            version++;
        }
    }

    public void criticalXid(String nodeId, int xid, long atMillis) {
        NodeState node = byId.get(nodeId);
        if (node != null && atMillis >= node.lastCriticalXidMillis) {
            node.lastCriticalXidMillis = atMillis;
            node.lastCriticalXid = xid;
            version++;
        }
    }

    /** Why the assignment cannot be held now, or null when it can. */
    public String conflict(Assignment a) {
        if (assignments.containsKey(a.allocationId())) {
            return null;
        }
        NodeState node = byId.get(a.nodeId());
        return node == null ? null : fits(node, a);
    }

    /**
     * Holds an assignment's GPUs, CPU and memory (Reserve). Holding the same allocation again is a
     * no-op; a conflicting one throws, naming the GPU.
     */
    public void reserve(Assignment a) {
        if (assignments.containsKey(a.allocationId())) {
            return;
        }
        NodeState node = byId.get(a.nodeId());
        if (node != null) {
            String why = fits(node, a);
            if (why != null) {
                throw new IllegalStateException("cannot reserve " + a.allocationId() + " on " + a.nodeId() + ": " + why);
            }
            unindex(node);
            apply(node, a, +1);
            index(node);
        }
        assignments.put(a.allocationId(), a);
        byNode.computeIfAbsent(a.nodeId(), k -> new ArrayList<>(4)).add(a);
        version++;
    }

    /** Frees an assignment (Unreserve). Idempotent: an unknown allocation does nothing. */
    public Optional<Assignment> unreserve(String allocationId) {
        Assignment a = assignments.get(allocationId);
        if (a == null) {
            return Optional.empty();
        }
        NodeState node = byId.get(a.nodeId());
        if (node != null) {
            unindex(node);
            apply(node, a, -1);
            index(node);
        }
        forget(a);
        version++;
        return Optional.of(a);
    }

    private void forget(Assignment a) {
        assignments.remove(a.allocationId());
        List<Assignment> list = byNode.get(a.nodeId());
        if (list != null) {
            list.remove(a);
            if (list.isEmpty()) {
                byNode.remove(a.nodeId());
            }
        }
    }

    private static String fits(NodeState node, Assignment a) {
        for (int index : a.gpuIndices()) {
            GpuState g = node.gpuByIndex(index);
            if (g == null) {
                return "GPU " + index + " does not exist";
            }
            GpuAdmission.Verdict verdict = a.isMig() ? GpuAdmission.slot(g.mig, a.migProfile(), a.migStart(), g.migMask)
                    : GpuAdmission.share(g.mig, g.usedMilli, a.milliGpu());
            String why = switch (verdict) {
                case ADMITTED -> null;
                case NOT_IN_MIG_MODE -> "GPU " + index + " is not in MIG mode";
                case IN_MIG_MODE -> "GPU " + index + " is in MIG mode";
                case PROFILE_NOT_OFFERED -> "GPU " + index + " has no MIG profile " + a.migProfile();
                case START_NOT_ALLOWED -> "MIG profile " + a.migProfile() + " cannot start at slice " + a.migStart();
                case SLICES_HELD -> "MIG slices of GPU " + index + " at " + a.migStart() + " are held";
                case MEDIA_ENGINES_HELD -> "the media engines of GPU " + index + " are held by another +me instance";
                case HELD, TOO_LITTLE_FREE -> "GPU " + index + " is held (" + g.usedMilli + " milli in use)";
            };
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    private static void apply(NodeState node, Assignment a, int sign) {
        for (int index : a.gpuIndices()) {
            GpuState g = node.gpuByIndex(index);
            if (a.isMig()) {
                int mask = g.mig.occupancy(g.mig.profile(a.migProfile()).orElseThrow(), a.migStart());
                g.migMask = sign > 0 ? g.migMask | mask : g.migMask & ~mask;
            } else {
                g.usedMilli = Math.max(0, Math.min(1000, g.usedMilli + sign * a.milliGpu()));
            }
        }
        node.cpuUsed += sign * a.cpuMillis();
        node.memoryUsed += sign * a.memoryMib();
        node.recount();
    }

    private void index(NodeState node) {
        if (!topologyDirty && node.rdmaLeaf != null) {
            node.rdmaLeaf.hostsByFree[Math.min(node.wholeFree, MAX_BUCKET)]++;
        }
        if (node.mixedModels) {
            mixed.add(node);
        } else {
            byModel.computeIfAbsent(node.model, ModelIndex::new).bucket(node.wholeFree).add(node);
        }
        boolean hasPartial = false;
        boolean hasMig = false;
        for (GpuState g : node.gpus) {
            hasPartial |= g.isPartial();
            hasMig |= g.mig != null && !g.mig.isFull(g.migMask);
        }
        if (hasPartial) {
            partial.add(node);
        }
        if (hasMig) {
            migCapable.add(node);
        }
        for (int k = 0; k < node.migProfiles.length; k++) {
            int percent = node.migBest[k];
            if (percent >= 0) {
                Bucket[] buckets = migByProfile.computeIfAbsent(node.migProfiles[k], x -> new Bucket[101]);
                if (buckets[percent] == null) {
                    buckets[percent] = new Bucket();
                }
                buckets[percent].add(node);
            }
        }
    }

    private void unindex(NodeState node) {
        if (!topologyDirty && node.rdmaLeaf != null) {
            node.rdmaLeaf.hostsByFree[Math.min(node.wholeFree, MAX_BUCKET)]--;
        }
        if (node.mixedModels) {
            mixed.remove(node);
        } else {
            ModelIndex idx = byModel.get(node.model);
            if (idx != null) {
                idx.bucket(node.wholeFree).remove(node);
            }
        }
        partial.remove(node);
        migCapable.remove(node);
        for (int k = 0; k < node.migProfiles.length; k++) {
            int percent = node.migBest[k];
            if (percent >= 0) {
                migByProfile.get(node.migProfiles[k])[percent].remove(node);
            }
        }
    }

    /**
     * Visits, best fit first, the hosts that may have {@code minWholeFree} whole free GPUs of an
     * allowed model (all models when {@code models} is empty): hosts of one model by ascending free
     * count, then hosts of mixed models. Stops when the visitor returns false.
     */
    public void visitByFreeGpus(Set<String> models, int minWholeFree, Predicate<NodeState> visitor) {
        int from = Math.min(Math.max(minWholeFree, 0), MAX_BUCKET);
        if (models.size() == 1) {
            ModelIndex idx = byModel.get(models.iterator().next());
            if (idx != null && !idx.visit(from, visitor)) {
                return;
            }
        } else {
            int top = 0;
            for (ModelIndex idx : byModel.values()) {
                top = Math.max(top, idx.buckets.length);
            }
            for (int b = from; b < top; b++) {
                for (ModelIndex idx : byModel.values()) {
                    if (models.isEmpty() || models.contains(idx.model)) {
                        Bucket bucket = idx.peek(b);
                        if (bucket != null && !bucket.visit(visitor)) {
                            return;
                        }
                    }
                }
            }
        }
        mixed.visit(visitor);
    }

    /** Visits hosts that have a GPU partly used by fractions. */
    public void visitPartial(Predicate<NodeState> visitor) {
        partial.visit(visitor);
    }

    /** Visits hosts with a MIG GPU that still has free slices. */
    public void visitMig(Predicate<NodeState> visitor) {
        migCapable.visit(visitor);
    }

    /**
     * Visits the hosts with a MIG GPU that has a free legal start for {@code profile}, fullest first
     * (by {@link NodeState#migBestPercent}); hosts without one are never visited. Stops when the
     * visitor returns false.
     */
    public void visitMig(String profile, Predicate<NodeState> visitor) {
        Bucket[] buckets = migByProfile.get(profile);
        if (buckets == null) {
            return;
        }
        for (int b = buckets.length - 1; b >= 0; b--) {
            if (buckets[b] != null && !buckets[b].visit(visitor)) {
                return;
            }
        }
    }

    /** Hosts indexed as having a free {@code profile} placement, fullest first (for invariant tests). */
    List<NodeState> migIndexed(String profile) {
        List<NodeState> out = new ArrayList<>();
        visitMig(profile, n -> out.add(n));
        return out;
    }

    /**
     * The leaves of every RDMA fabric in tree order (fabric, then spine, then leaf, each by name),
     * with their hosts in id order and their counts of hosts by free whole GPUs. Rebuilt only after a
     * host joins, leaves or moves in the switch tree; the counts follow every reserve and release.
     */
    public List<RdmaLeaf> rdmaLeaves() {
        if (topologyDirty) {
            Map<String, Map<String, Map<String, List<NodeState>>>> tree = new TreeMap<>();
            for (NodeState n : byId.values()) {
                n.rdmaLeaf = null;
                if (n.fabric != null) {
                    tree.computeIfAbsent(n.fabric, k -> new TreeMap<>()).computeIfAbsent(n.spine, k -> new TreeMap<>())
                            .computeIfAbsent(n.leaf, k -> new ArrayList<>()).add(n);
                }
            }
            List<RdmaLeaf> leaves = new ArrayList<>();
            int fabricOrdinal = 0;
            int spineOrdinal = 0;
            for (var fabric : tree.entrySet()) {
                for (var spine : fabric.getValue().entrySet()) {
                    for (var leaf : spine.getValue().entrySet()) {
                        RdmaLeaf l = new RdmaLeaf(fabric.getKey(), spine.getKey(), leaf.getKey(), fabricOrdinal,
                                spineOrdinal, MAX_BUCKET + 1);
                        for (NodeState n : leaf.getValue()) {
                            n.rdmaLeaf = l;
                            l.hosts.add(n);
                            l.maxGpus = Math.max(l.maxGpus, n.gpus.length);
                            l.hostsByFree[Math.min(n.wholeFree, MAX_BUCKET)]++;
                        }
                        leaves.add(l);
                    }
                    spineOrdinal++;
                }
                fabricOrdinal++;
            }
            rdmaLeaves = Collections.unmodifiableList(leaves);
            topologyDirty = false;
        }
        return rdmaLeaves;
    }

    /**
     * Recomputes every index from the hosts themselves and says where the kept one differs (null when
     * none does): the free-GPU buckets, the MIG-profile index and each leaf's counts. For tests.
     */
    String indexProblems() {
        List<String> problems = new ArrayList<>();
        for (NodeState n : byId.values()) {
            int free = 0;
            for (GpuState g : n.gpus) {
                free += g.isWholeFree() ? 1 : 0;
            }
            if (free != n.wholeFree) {
                problems.add(n.id + ": wholeFree " + n.wholeFree + ", recount " + free);
            }
            if (!n.mixedModels) {
                ModelIndex idx = byModel.get(n.model);
                if (idx == null || !idx.bucket(n.wholeFree).members.contains(n)) {
                    problems.add(n.id + ": not in its free-GPU bucket " + n.wholeFree);
                }
            }
            for (int k = 0; k < n.migProfiles.length; k++) {
                String p = n.migProfiles[k];
                int best = n.computeMigBest(p);
                if (best != n.migBest[k]) {
                    problems.add(n.id + ": " + p + " best " + n.migBest[k] + ", recount " + best);
                }
                boolean indexed = migIndexed(p).contains(n);
                if (indexed != (best >= 0)) {
                    problems.add(n.id + ": " + p + (indexed ? " indexed without a free start" : " free but not indexed"));
                }
            }
        }
        for (var e : migByProfile.entrySet()) {
            for (NodeState n : migIndexed(e.getKey())) {
                if (byId.get(n.id) != n) {
                    problems.add(n.id + ": stale host in the " + e.getKey() + " index");
                }
            }
        }
        int leafHosts = 0;
        for (RdmaLeaf l : rdmaLeaves()) {
            int[] counts = new int[MAX_BUCKET + 1];
            for (NodeState n : l.hosts) {
                leafHosts++;
                counts[Math.min(n.wholeFree, MAX_BUCKET)]++;
                if (byId.get(n.id) != n || n.rdmaLeaf != l || !l.name.equals(n.leaf) || !l.spine.equals(n.spine)
                        || !l.fabric.equals(n.fabric)) {
                    problems.add(n.id + ": misplaced under leaf " + l);
                }
            }
            if (!Arrays.equals(counts, l.hostsByFree)) {
                problems.add("leaf " + l + ": counts " + Arrays.toString(l.hostsByFree) + ", recount "
                        + Arrays.toString(counts));
            }
        }
        long withFabric = byId.values().stream().filter(n -> n.fabric != null).count();
        if (leafHosts != withFabric) {
            problems.add(leafHosts + " hosts under leaves, " + withFabric + " with a fabric");
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    public Optional<NodeState> node(String nodeId) {
        return Optional.ofNullable(byId.get(nodeId));
    }

    /** Every host, in id order. */
    public Collection<NodeState> nodes() {
        return Collections.unmodifiableCollection(byId.values());
    }

    public int size() {
        return nodes.size();
    }

    public Optional<Assignment> assignment(String allocationId) {
        return Optional.ofNullable(assignments.get(allocationId));
    }

    public Collection<Assignment> assignments() {
        return Collections.unmodifiableCollection(assignments.values());
    }

    public List<Assignment> assignmentsOn(String nodeId) {
        return List.copyOf(byNode.getOrDefault(nodeId, List.of()));
    }

    /** Whether any allocation is held on the host. */
    public boolean holdsWork(String nodeId) {
        List<Assignment> held = byNode.get(nodeId);
        return held != null && !held.isEmpty();
    }

    /** The dearest GPU-hour any host has offered (it never shrinks), for normalising price scores. */
    public long maxPricePerGpuMicros() {
        return maxPricePerGpu;
    }

    /** The cheapest GPU-hour any host has offered (it never grows), for bounding price scores. */
    public long minPricePerGpuMicros() {
        return minPricePerGpu;
    }

    /** Grows with every change that can alter a placement; decisions cached against it stay valid while it is unchanged. */
    public long version() {
        return version;
    }

    private static final class ModelIndex {
        final String model;
        Bucket[] buckets = new Bucket[9];

        ModelIndex(String model) {
            this.model = model;
        }

        Bucket bucket(int free) {
            int b = Math.min(free, MAX_BUCKET);
            if (b >= buckets.length) {
                buckets = Arrays.copyOf(buckets, b + 1);
            }
            if (buckets[b] == null) {
                buckets[b] = new Bucket();
            }
            return buckets[b];
        }

        Bucket peek(int b) {
            return b < buckets.length ? buckets[b] : null;
        }

        boolean visit(int from, Predicate<NodeState> visitor) {
            for (int b = from; b < buckets.length; b++) {
                if (buckets[b] != null && !buckets[b].visit(visitor)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A set of hosts with O(1) add and remove, iterated in a stable order. */
    private static final class Bucket {
        private final java.util.LinkedHashSet<NodeState> members = new java.util.LinkedHashSet<>();

        void add(NodeState n) {
            members.add(n);
        }

        void remove(NodeState n) {
            members.remove(n);
        }

        boolean visit(Predicate<NodeState> visitor) {
            for (NodeState n : members) {
                if (!visitor.test(n)) {
                    return false;
                }
            }
            return true;
        }
    }
}
