package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which hosts to let go. A host that never registered within the launch timeout is released whatever the pool's
 * minimum (it is no capacity); a draining host with nothing left is released. A registered host that no pending
 * job needs is released after the idle timeout with no allocations, or drained after as long below the utilization
 * threshold when all its jobs are checkpointable and fit in the free GPUs of the pool's other hosts of its model.
 * Neither takes a pool below its minimum: the longest idle go first, empty before busy.
 */
final class ScaleIn {

    private ScaleIn() {}

    /** Hosts that will not take demand: launches that never registered, drains that are done. */
    static void expire(long now, SupplyState s, AutoscalerConfig config, List<Release> out) {
        long timeout = config.launchTimeout().toMillis();
        for (int i = 0; i < s.hosts.length; i++) {
            Host h = s.hosts[i];
            if (h.state() == HostState.LAUNCHING && now - h.launchedAt() > timeout) {
                s.leaving[i] = true;
                s.gone[i] = true;
                out.add(new Release(h.hostId(), h.pool(), Release.Action.RELEASE, Release.Reason.NEVER_REGISTERED,
                        "release " + h.hostId() + ": never registered, launched " + Text.minutes(now - h.launchedAt())
                                + " ago (launch timeout " + Text.minutes(timeout) + ")"));
            } else if (h.state() == HostState.DRAINING && h.allocatedGpus() == 0) {
                s.leaving[i] = true;
                s.gone[i] = true;
                out.add(new Release(h.hostId(), h.pool(), Release.Action.RELEASE, Release.Reason.DRAINED,
                        "release " + h.hostId() + ": drained, no allocations left"));
            }
        }
    }

    /** Registered hosts that no pending job needed, idle or underused for the idle timeout. */
    static void releaseUnneeded(long now, SupplyState s, Map<String, PoolLimits> limits, AutoscalerConfig config,
            List<Release> out, List<Decision> kept) {
        long idleTimeout = config.idleTimeout().toMillis();
        double threshold = config.lowUtilizationThreshold();
        Map<String, List<Integer>> byPool = new TreeMap<>();
        for (int i = 0; i < s.hosts.length; i++) {
            byPool.computeIfAbsent(s.hosts[i].pool(), p -> new ArrayList<>()).add(i);
        }
        for (var e : byPool.entrySet()) {
            PoolLimits pool = limits.get(e.getKey());
            if (pool == null) {
                continue; // Autoscaler reports the unconfigured pool once
            }
            int staying = 0;
            Map<String, Integer> freeByModel = new HashMap<>();
            List<Integer> candidates = new ArrayList<>();
            for (int i : e.getValue()) {
                Host h = s.hosts[i];
                if (s.leaving[i] || h.state() == HostState.DRAINING) {
                    continue;
                }
                staying++;
                if (h.state() != HostState.RUNNING) {
                    continue;
                }
                freeByModel.merge(s.gpuModel(i), s.free[i], Integer::sum);
                boolean unneededLongEnough = !s.needed[i] && h.isIdle() && now - h.idleSince() >= idleTimeout;
                boolean empty = h.allocatedGpus() == 0;
                boolean underused = h.utilization() < threshold && h.runningJobsCheckpointable();
                if (unneededLongEnough && (empty || underused)) {
                    candidates.add(i);
                }
            }
            candidates.sort(Comparator.<Integer>comparingInt(i -> s.hosts[i].allocatedGpus() == 0 ? 0 : 1)
                    .thenComparingLong(i -> s.hosts[i].idleSince()).thenComparing(i -> s.hosts[i].hostId()));
            for (int i : candidates) {
                Host h = s.hosts[i];
                String model = s.gpuModel(i);
                String idleFor = Text.minutes(now - h.idleSince());
                if (staying <= pool.minHosts()) {
                    kept.add(new Decision(Decision.Kind.KEEP, h.hostId(), List.of(), "keep " + h.hostId() + ": idle "
                            + idleFor + ", but pool " + h.pool() + " is at its minimum of " + pool.minHosts()
                            + " host(s)"));
                    continue;
                }
                int otherFree = freeByModel.getOrDefault(model, 0) - s.free[i];
                if (h.allocatedGpus() == 0) {
                    freeByModel.put(model, otherFree);
                    s.gone[i] = true;
                    out.add(new Release(h.hostId(), h.pool(), Release.Action.RELEASE, Release.Reason.IDLE,
                            "release " + h.hostId() + ": idle " + idleFor + " >= " + Text.minutes(idleTimeout)));
                } else if (h.allocatedGpus() <= otherFree) {
                    freeByModel.put(model, otherFree - h.allocatedGpus());
                    out.add(new Release(h.hostId(), h.pool(), Release.Action.DRAIN, Release.Reason.UNDERUSED,
                            "drain " + h.hostId() + ": utilization " + Text.usd2(h.utilization()) + " < "
                                    + Text.usd2(threshold) + " for " + idleFor + "; its " + h.allocatedGpus()
                                    + " GPU(s) of checkpointable work fit in the " + otherFree + " free " + model
                                    + " GPU(s) of the pool's other hosts"));
                } else {
                    continue;
                }
                s.leaving[i] = true;
                staying--;
            }
        }
    }
}
