package dev.gpucloud.autoscaler.core;

import dev.gpucloud.autoscaler.core.LaunchPlanner.PlannedHost;
import dev.gpucloud.autoscaler.core.LaunchPlanner.PlannedJob;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Lets planned launches through a pool's limits, oldest pending job first: a job's hosts are launched all or none,
 * and a job held back by the host limit, the budget (the hourly price of the pool's hosts plus the new ones) or the
 * launch rate (hosts launched in the last minute plus the new ones) does not stop a later job that fits. Spot counts
 * at its spot price; its fallback to on demand is offered only while the budget holds the on-demand price. Then
 * tops the pool up to its minimum with its cheapest type on demand, within the same limits.
 */
final class LaunchAdmission {

    /** The pool's supply as the limits see it. {@code staying}: hosts that are not leaving or draining. */
    record PoolSupply(int hosts, int staying, double usdPerHour, int launchedLastMinute) {}

    private static final int SHOWN = 5;
    private static final double CENT = 1e-9;

    private final List<PlannedHost> planned;
    private final boolean[] admitted;
    final List<Launch> launches = new ArrayList<>();
    final List<Decision> launchDecisions = new ArrayList<>();
    final List<Decision> holds = new ArrayList<>();

    LaunchAdmission(List<PlannedHost> planned) {
        this.planned = planned;
        this.admitted = new boolean[planned.size()];
    }

    void admit(String pool, PoolLimits limits, PoolSupply supply, List<PlannedJob> jobs, Catalog catalog, TypeFit fit) {
        jobs.sort((a, b) -> {
            int c = Long.compare(a.job().pendingSince(), b.job().pendingSince());
            return c != 0 ? c : a.job().jobId().compareTo(b.job().jobId());
        });
        int count = 0;
        double usd = 0;
        List<PlannedJob> served = new ArrayList<>();
        for (PlannedJob pj : jobs) {
            int newHosts = 0;
            double newUsd = 0;
            for (int h : pj.hosts()) {
                if (!admitted[h]) {
                    newHosts++;
                    newUsd += planned.get(h).usd();
                }
            }
            String why = newHosts == 0 ? null : refusal(pool, limits, supply, count, usd, newHosts, newUsd);
            if (why != null) {
                holds.add(new Decision(Decision.Kind.HOLD, pj.job().jobId(), List.of(pj.job().jobId()),
                        "hold " + pj.job().jobId() + ": " + why));
                continue;
            }
            for (int h : pj.hosts()) {
                admitted[h] = true;
            }
            count += newHosts;
            usd += newUsd;
            served.add(pj);
        }
        double slack = limits.maxUsdPerHour() - supply.usdPerHour() - usd;
        double reserved = emit(pool, served, slack);
        topUp(pool, limits, supply, count, usd + reserved, catalog, fit);
    }

    /** Why these new hosts may not launch, or null. */
    private static String refusal(String pool, PoolLimits limits, PoolSupply s, int count, double usd, int newHosts,
            double newUsd) {
        if (limits.maxUsdPerHour() == 0) {
            return "budget of pool " + pool + " is 0 USD/h: no launches";
        }
        if ((long) s.hosts() + count + newHosts > limits.maxHosts()) {
            return "max hosts " + limits.maxHosts() + " of pool " + pool + " would be exceeded (" + (s.hosts() + count)
                    + " + " + newHosts + ")";
        }
        if (s.usdPerHour() + usd + newUsd > limits.maxUsdPerHour() + CENT) {
            return "budget " + Text.usd(limits.maxUsdPerHour()) + " USD/h of pool " + pool + " would be exceeded ("
                    + Text.usd(s.usdPerHour() + usd) + " + " + Text.usd(newUsd) + ")";
        }
        if ((long) s.launchedLastMinute() + count + newHosts > limits.maxLaunchesPerMinute()) {
            return "launch rate " + limits.maxLaunchesPerMinute() + "/min of pool " + pool + " would be exceeded ("
                    + (s.launchedLastMinute() + count) + " in the last minute + " + newHosts + ")";
        }
        return null;
    }

    /**
     * One launch per type, capacity and placement group, with the jobs it is for. A spot launch may fall back to on
     * demand only while the budget holds the difference; answers the difference so reserved.
     */
    private double emit(String pool, List<PlannedJob> served, double slack) {
        Map<Integer, int[]> countByBatch = new TreeMap<>();
        Map<Integer, List<PendingJob>> jobsByBatch = new HashMap<>();
        Map<Integer, Integer> firstHost = new HashMap<>();
        BitSet counted = new BitSet();
        for (PlannedJob pj : served) {
            int lastBatch = -1;
            for (int h : pj.hosts()) {
                int batch = planned.get(h).batch();
                if (!counted.get(h)) {
                    counted.set(h);
                    countByBatch.computeIfAbsent(batch, b -> new int[1])[0]++;
                    firstHost.putIfAbsent(batch, h);
                }
                if (batch != lastBatch) {
                    jobsByBatch.computeIfAbsent(batch, b -> new ArrayList<>()).add(pj.job());
                    lastBatch = batch;
                }
            }
        }
        double reserved = 0;
        for (var e : countByBatch.entrySet()) {
            List<PendingJob> js = jobsByBatch.get(e.getKey());
            js.sort((a, b) -> a.jobId().compareTo(b.jobId()));
            PlannedHost h = planned.get(firstHost.get(e.getKey()));
            int n = e.getValue()[0];
            boolean fallback = false;
            if (h.capacity() == Capacity.SPOT) {
                double extra = n * (h.type().onDemandUsdPerHour() - h.usd());
                fallback = extra <= slack - reserved + CENT;
                if (fallback) {
                    reserved += extra;
                }
            }
            add(pool, h, n, js, null, fallback);
        }
        return reserved;
    }

    /** Hosts up to the pool's minimum: its cheapest type on demand, as many as the limits allow. */
    private void topUp(String pool, PoolLimits limits, PoolSupply s, int count, double usd, Catalog catalog,
            TypeFit fit) {
        int missing = limits.minHosts() - s.staying() - count;
        if (missing <= 0) {
            return;
        }
        BitSet types = fit.poolTypes(pool, limits);
        InstanceType cheapest = null;
        for (int t = types.nextSetBit(0); t >= 0; t = types.nextSetBit(t + 1)) {
            InstanceType type = catalog.get(t);
            if (cheapest == null || type.onDemandUsdPerHour() < cheapest.onDemandUsdPerHour()) {
                cheapest = type;
            }
        }
        String below = "pool " + pool + " has " + (s.staying() + count) + " host(s), below its minimum of "
                + limits.minHosts();
        if (cheapest == null) {
            holds.add(new Decision(Decision.Kind.HOLD, pool, List.of(), "hold " + below + ": no catalog type allowed"));
            return;
        }
        double price = cheapest.onDemandUsdPerHour();
        int n = missing;
        String why = null;
        while (n > 0 && (why = refusal(pool, limits, s, count, usd, n, n * price)) != null) {
            n--;
        }
        if (n > 0) {
            PlannedHost h = new PlannedHost(-1, -1, pool, cheapest, Capacity.ON_DEMAND, null, price);
            add(pool, h, n, List.of(), below, false);
        }
        if (n < missing) {
            String reason = refusal(pool, limits, s, count + n, usd + n * price, 1, price);
            holds.add(new Decision(Decision.Kind.HOLD, pool, List.of(),
                    "hold " + below + ": " + (reason != null ? reason : why)));
        }
    }

    private void add(String pool, PlannedHost h, int n, List<PendingJob> jobs, String forMinimum, boolean fallback) {
        boolean spot = h.capacity() == Capacity.SPOT;
        double usd = Math.round(n * h.usd() * 10_000) / 10_000.0;
        List<String> ids = jobs.stream().map(PendingJob::jobId).toList();
        launches.add(new Launch(pool, h.type().name(), n, h.capacity(), fallback, h.placementGroup(), h.type().zones(),
                ids, usd));
        StringBuilder sb = new StringBuilder("launch ").append(n).append(" x ").append(h.type().name()).append(' ')
                .append(h.capacity());
        if (forMinimum != null) {
            sb.append(": ").append(forMinimum);
        } else {
            sb.append(" for ").append(jobs.size()).append(" job(s): ").append(Text.jobs(jobs, SHOWN));
        }
        sb.append("; ").append(Text.usd(usd)).append(" USD/h");
        if (h.placementGroup() != null) {
            sb.append(", placement group ").append(h.placementGroup());
        }
        if (fallback) {
            sb.append(", on-demand fallback");
        } else if (spot) {
            sb.append(", no on-demand fallback: the budget does not hold it");
        }
        launchDecisions.add(new Decision(Decision.Kind.LAUNCH, pool, ids, sb.toString()));
    }
}
