package dev.gpucloud.autoscaler.core;

import dev.gpucloud.autoscaler.core.LaunchAdmission.PoolSupply;
import dev.gpucloud.autoscaler.core.LaunchPlanner.PlannedJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The autoscaler's decision: a pure function of the time, demand, supply, catalog and limits. In order: hosts that
 * never registered or finished draining are released; pending jobs that fit on free or launching GPUs are left to
 * them; hosts no pending job needs are released or drained after the idle timeout, never below a pool's minimum;
 * the rest of the demand is packed onto new hosts of the cheapest fitting types, spot for checkpointable jobs, and
 * let through the pools' host, budget and launch-rate limits. Each step says why in a {@link Decision}; the same
 * inputs give the same plan.
 */
public final class Autoscaler {

    private static final long MINUTE = 60_000;

    private Autoscaler() {}

    /** Decides with the launch rate counted on the supply's own launch times (hosts launched in the last minute). */
    public static Plan decide(long nowMillis, List<PendingJob> pending, List<Host> supply, Catalog catalog,
            Map<String, PoolLimits> limits, AutoscalerConfig config) {
        Objects.requireNonNull(supply, "supply");
        List<LaunchRecord> history = new ArrayList<>();
        for (Host h : supply) {
            if (h != null && h.launchedAt() > nowMillis - MINUTE && h.launchedAt() <= nowMillis) {
                history.add(new LaunchRecord(h.pool(), h.launchedAt(), 1));
            }
        }
        return decide(nowMillis, pending, supply, history, catalog, limits, config);
    }

    /**
     * Decides with the launch rate counted on {@code recentLaunches}: the caller's record of what it asked for, which
     * also counts hosts that never came.
     */
    public static Plan decide(long nowMillis, List<PendingJob> pending, List<Host> supply,
            List<LaunchRecord> recentLaunches, Catalog catalog, Map<String, PoolLimits> limits,
            AutoscalerConfig config) {
        Objects.requireNonNull(pending, "pending");
        Objects.requireNonNull(supply, "supply");
        Objects.requireNonNull(recentLaunches, "recentLaunches");
        Objects.requireNonNull(catalog, "catalog");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(config, "config");
        List<Decision> configNotes = new ArrayList<>();
        checkLimits(limits, catalog, configNotes);
        checkJobs(pending);

        SupplyState s = new SupplyState(supply, catalog, configNotes);
        List<Release> releases = new ArrayList<>();
        ScaleIn.expire(nowMillis, s, config, releases);

        TypeFit fit = new TypeFit(catalog);
        SupplyAbsorber absorber = new SupplyAbsorber(s, catalog, fit);
        List<PendingJob> rest = absorber.absorb(new ArrayList<>(pending));

        List<Decision> kept = new ArrayList<>();
        ScaleIn.releaseUnneeded(nowMillis, s, limits, config, releases, kept);

        LaunchPlanner planner = new LaunchPlanner(catalog, fit);
        planner.plan(rest, limits);

        Map<String, List<PlannedJob>> plannedByPool = new TreeMap<>();
        for (PlannedJob pj : planner.jobs) {
            plannedByPool.computeIfAbsent(pj.job().pool(), p -> new ArrayList<>()).add(pj);
        }
        Map<String, PoolSupply> pools = poolSupply(nowMillis, s, recentLaunches);
        LaunchAdmission admission = new LaunchAdmission(planner.hosts);
        for (var e : new TreeMap<>(limits).entrySet()) {
            String pool = e.getKey();
            admission.admit(pool, e.getValue(), pools.getOrDefault(pool, new PoolSupply(0, 0, 0, 0)),
                    plannedByPool.getOrDefault(pool, new ArrayList<>()), catalog, fit);
        }
        for (String pool : new TreeSet<>(pools.keySet())) {
            if (!limits.containsKey(pool)) {
                configNotes.add(new Decision(Decision.Kind.CONFIG, pool, List.of(), "pool " + pool
                        + " has hosts but no limits: its hosts are neither released nor counted for launches"));
            }
        }

        releases.sort(Comparator.comparing(Release::hostId));
        List<Decision> decisions = new ArrayList<>(configNotes);
        for (Release r : releases) {
            decisions.add(new Decision(r.action() == Release.Action.DRAIN ? Decision.Kind.DRAIN
                    : Decision.Kind.RELEASE, r.hostId(), List.of(), r.message()));
        }
        kept.sort(Comparator.comparing(Decision::subject));
        decisions.addAll(kept);
        absorber.absorbed.forEach((pool, jobs) -> decisions.add(waiting(pool, jobs)));
        decisions.addAll(admission.launchDecisions);
        List<Decision> tail = new ArrayList<>(admission.holds);
        tail.addAll(planner.unplaceable);
        tail.sort((a, b) -> {
            int c = a.kind().compareTo(b.kind());
            return c != 0 ? c : a.subject().compareTo(b.subject());
        });
        decisions.addAll(tail);
        return new Plan(admission.launches, releases, decisions);
    }

    /** The placement group a fabric gang's hosts are launched in: named after the job, so a later round finds it. */
    public static String placementGroupOf(PendingJob job) {
        return "pg-" + job.jobId();
    }

    private static Decision waiting(String pool, List<PendingJob> jobs) {
        List<PendingJob> sorted = new ArrayList<>(jobs);
        sorted.sort((a, b) -> a.jobId().compareTo(b.jobId()));
        List<String> ids = sorted.stream().map(PendingJob::jobId).toList();
        return new Decision(Decision.Kind.WAIT, pool, ids, "wait: " + jobs.size() + " job(s) of pool " + pool
                + " fit on free or launching GPUs, nothing to launch for them: " + Text.jobs(sorted, 5));
    }

    private static Map<String, PoolSupply> poolSupply(long now, SupplyState s, List<LaunchRecord> history) {
        Map<String, int[]> counts = new HashMap<>();
        Map<String, Double> usd = new HashMap<>();
        for (int i = 0; i < s.hosts.length; i++) {
            if (s.gone[i]) {
                continue;
            }
            Host h = s.hosts[i];
            int[] c = counts.computeIfAbsent(h.pool(), p -> new int[3]);
            c[0]++;
            if (!s.leaving[i] && h.state() != HostState.DRAINING) {
                c[1]++;
            }
            usd.merge(h.pool(), s.usdPerHour(i), Double::sum);
        }
        for (LaunchRecord r : history) {
            if (r != null && r.atMillis() > now - MINUTE && r.atMillis() <= now) {
                counts.computeIfAbsent(r.pool(), p -> new int[3])[2] += r.hosts();
            }
        }
        Map<String, PoolSupply> out = new HashMap<>();
        counts.forEach((pool, c) -> out.put(pool, new PoolSupply(c[0], c[1], usd.getOrDefault(pool, 0.0), c[2])));
        return out;
    }

    private static void checkLimits(Map<String, PoolLimits> limits, Catalog catalog, List<Decision> notes) {
        for (var e : new TreeMap<>(limits).entrySet()) {
            if (e.getValue() == null) {
                throw new IllegalArgumentException("limits of pool " + e.getKey() + " are null");
            }
            for (String t : new TreeSet<>(e.getValue().instanceTypes())) {
                if (catalog.find(t).isEmpty()) {
                    notes.add(new Decision(Decision.Kind.CONFIG, e.getKey(), List.of(), "pool " + e.getKey()
                            + " names instance type " + t + ", which is not in the catalog: ignored"));
                }
            }
        }
    }

    private static void checkJobs(List<PendingJob> pending) {
        Set<String> ids = new java.util.HashSet<>(pending.size() * 2);
        for (PendingJob j : pending) {
            if (j == null) {
                throw new IllegalArgumentException("pending holds a null job");
            }
            if (!ids.add(j.jobId())) {
                throw new IllegalArgumentException("pending lists job " + j.jobId() + " twice");
            }
        }
    }
}
