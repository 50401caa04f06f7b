package dev.gpucloud.scheduler.liveness;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Decides which held allocations are lost because their host went quiet or was reclaimed. A host's
 * silence is measured from the later of when it was last heard and when this scheduler began to
 * listen ({@link #listeningSince}): a record from before a restart says nothing about now, so a
 * scheduler that has just started never declares a host lost for the time it was not there to hear.
 *
 * <p>When most of the fleet is silent at once, the likelier cause is that this scheduler cannot hear
 * (its broker, or the network to it, is down) rather than that most hosts died together; as Kubernetes'
 * node lifecycle controller stops evicting in a full disruption, nothing is lost for silence then, and
 * silence counts afresh from when hosts are heard again. A spot reclaim is evidence of its own and still
 * loses its host's work.
 */
public final class HostLiveness {

    /** More than this share of the fleet silent past the timeout at once is taken for deafness. */
    static final double DEAF_SHARE = 0.55;
    /** Fleets smaller than this are judged host by host: one silent host of two is not an outage. */
    static final int DEAF_MIN_HOSTS = 3;

    private final long lostAfterMillis;
    private long listeningSinceMillis;
    /** When this instance began to listen (its start): unlike {@link #listeningSinceMillis}, deafness leaves it. */
    private long startedListeningMillis;
    private boolean deaf;

    /**
     * @param lostAfterMillis how long a host may be silent before its allocations are lost
     * @param listeningSinceMillis when this scheduler could first hear hosts (its start, or its takeover)
     */
    public HostLiveness(long lostAfterMillis, long listeningSinceMillis) {
        if (lostAfterMillis <= 0) {
            throw new IllegalArgumentException("lostAfterMillis must be > 0, was " + lostAfterMillis);
        }
        this.lostAfterMillis = lostAfterMillis;
        this.listeningSinceMillis = listeningSinceMillis;
        this.startedListeningMillis = listeningSinceMillis;
    }

    /** This scheduler began (again) to hear hosts at {@code atMillis}: after a takeover, say. */
    public void listeningSince(long atMillis) {
        listeningSinceMillis = atMillis;
        startedListeningMillis = atMillis;
    }

    public long listeningSinceMillis() {
        return listeningSinceMillis;
    }

    /**
     * By when host {@code node} must start what it is sent now: until then no scheduler can count it lost for
     * the host's silence (silence counts from {@link #silentSince} or later, and deafness only moves that on),
     * so a host that starts it by then starts work the scheduler still holds, and one that gets it later must
     * not start it.
     */
    public long startByMillis(NodeState node) {
        return silentSince(node) + lostAfterMillis;
    }

    /** Since when host {@code node} counts as silent: its last word, or when this scheduler began to listen. */
    public long silentSince(NodeState node) {
        long heard = node.lastHeardMillis();
        return heard == NodeState.NEVER ? listeningSinceMillis : Math.max(heard, listeningSinceMillis);
    }

    /**
     * The allocations that are lost at {@code nowMillis}, each with the reason, in the fleet's order.
     * {@code ignore} names holds that are not the scheduler's own (see {@link AllocationReconciler}).
     */
    public Map<String, String> lost(Fleet fleet, long nowMillis, Set<String> ignore) {
        deaf = mostlySilent(fleet, nowMillis);
        if (deaf) {
            listeningSinceMillis = nowMillis; // once hosts are heard again, their silence counts from here
        }
        Map<String, String> lost = new LinkedHashMap<>();
        for (Assignment a : fleet.assignments()) {
            if (ignore.contains(a.allocationId())) {
                continue;
            }
            String why = whyLost(fleet.node(a.nodeId()).orElse(null), a.nodeId(), nowMillis);
            if (deaf && why != null && !why.startsWith("spot host")) {
                continue;
            }
            if (why != null) {
                lost.put(a.allocationId(), why);
            }
        }
        return lost;
    }

    /**
     * Placement's side of deafness: when more than {@link #DEAF_SHARE} of the hosts this instance has heard
     * since it began to listen have been silent past {@code hostTimeoutMillis} at once (the broker, or the way
     * to it, was down), those hosts count as heard now for placement ({@link Fleet#heardFloor}). Work then goes
     * on being placed while the scheduler cannot hear, its commands waiting in the outbox, and the moment it
     * hears again, instead of waiting for each host's next sample to come through. A host that did die
     * meanwhile gets its START late or never: the START's start-by time and {@link #lost} take care of it.
     * Hosts not heard since this instance began to listen (an inventory record of a host long gone, on a
     * broker that keeps every host it ever saw) are never counted as heard this way. Returns whether it did.
     */
    public boolean bridgeDeafness(Fleet fleet, long nowMillis, long hostTimeoutMillis) {
        int heard = 0;
        int silent = 0;
        for (NodeState node : fleet.nodes()) {
            long last = node.lastHeardMillis();
            if (last == NodeState.NEVER || last < startedListeningMillis) {
                continue;
            }
            heard++;
            if (nowMillis - last > hostTimeoutMillis) {
                silent++;
            }
        }
        if (heard < DEAF_MIN_HOSTS || silent <= heard * DEAF_SHARE) {
            return false;
        }
        fleet.heardFloor(nowMillis, startedListeningMillis);
        return true;
    }

    /** Whether the last {@link #lost} found most of the fleet silent at once, and so lost nothing for silence. */
    public boolean deaf() {
        return deaf;
    }

    /**
     * Whether more than {@link #DEAF_SHARE} of the hosts that count, at least {@link #DEAF_MIN_HOSTS} of them,
     * are silent past the timeout. A host counts when this instance has heard it since it began to listen, or
     * when it holds work: not an inventory record of a host long gone (a broker keeps every host it ever saw),
     * which is silent forever and would make a scheduler on such a broker take itself for deaf and lose nothing
     * when a host really dies. Hosts holding work count even unheard, so a broker down since the start is
     * still deafness.
     */
    boolean mostlySilent(Fleet fleet, long nowMillis) {
        int hosts = 0;
        int silent = 0;
        for (NodeState node : fleet.nodes()) {
            long heard = node.lastHeardMillis();
            boolean heardHere = heard != NodeState.NEVER && heard >= startedListeningMillis;
            if (!heardHere && !fleet.holdsWork(node.id())) {
                continue;
            }
            hosts++;
            if (nowMillis - silentSince(node) > lostAfterMillis) {
                silent++;
            }
        }
        return hosts >= DEAF_MIN_HOSTS && silent > hosts * DEAF_SHARE;
    }

    /** Why an allocation on {@code node} is lost at {@code nowMillis}, or null while the host may still run it. */
    String whyLost(NodeState node, String nodeId, long nowMillis) {
        if (node == null) {
            long waited = nowMillis - listeningSinceMillis;
            return waited > lostAfterMillis ? "host " + nodeId + " has not reported since the scheduler began to"
                    + " listen at " + Instant.ofEpochMilli(listeningSinceMillis) + " (" + waited / 1000 + " s)" : null;
        }
        if (node.interruptionDeadlineMillis() != NodeState.NEVER && nowMillis > node.interruptionDeadlineMillis()) {
            return "spot host " + nodeId + " reclaimed at " + Instant.ofEpochMilli(node.interruptionDeadlineMillis());
        }
        long silent = nowMillis - silentSince(node);
        if (silent > lostAfterMillis) {
            return "host " + nodeId + " silent for " + silent / 1000 + " s" + (node.lastHeardMillis() < listeningSinceMillis
                    ? " (nothing heard since the scheduler began to listen at " + Instant.ofEpochMilli(listeningSinceMillis)
                    + ")" : "");
        }
        return null;
    }
}
