package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Packs the demand that supply could not absorb onto new hosts. Jobs that can run on the same types at the same
 * capacity form a group; each group takes the type on which packing all its workers costs least per hour (which is
 * the cheapest type per GPU when hosts fill, and does not buy an eight-GPU host for one GPU when they do not); the
 * groups that chose the same type share hosts, packed largest worker first, each worker on the fullest host that
 * holds it. A fabric gang gets hosts of its own, all of one RDMA type, in a placement group named after it.
 */
final class LaunchPlanner {

    /** A host the plan would launch. */
    record PlannedHost(int id, int batch, String pool, InstanceType type, Capacity capacity, String placementGroup,
            double usd) {}

    /** A job and the planned hosts its workers would run on: it is served only if all of them are launched. */
    record PlannedJob(PendingJob job, int[] hosts) {}

    private record GroupKey(String pool, Capacity capacity, BitSet types) {}

    private record Merged(String pool, InstanceType type, Capacity capacity, List<PendingJob> jobs) {}

    private final Catalog catalog;
    private final TypeFit fit;
    final List<PlannedHost> hosts = new ArrayList<>();
    final List<PlannedJob> jobs = new ArrayList<>();
    final List<Decision> unplaceable = new ArrayList<>();
    /** Hosts of one batch are launched together: one type, capacity and placement group. */
    private int batches;

    LaunchPlanner(Catalog catalog, TypeFit fit) {
        this.catalog = catalog;
        this.fit = fit;
    }

    void plan(List<PendingJob> demand, Map<String, PoolLimits> limits) {
        Map<GroupKey, List<PendingJob>> groups = new HashMap<>();
        List<PendingJob> gangs = new ArrayList<>();
        for (PendingJob job : demand) {
            PoolLimits pool = limits.get(job.pool());
            if (pool == null) {
                unplaceable.add(skip(job, "pool " + job.pool() + " is not configured"));
                continue;
            }
            TypeFit.Fit f = fit.launchFit(job, pool);
            if (!f.placeable()) {
                unplaceable.add(skip(job, f.unplaceable()));
            } else if (job.needsFabric()) {
                gangs.add(job);
            } else {
                groups.computeIfAbsent(new GroupKey(job.pool(), f.capacity(), f.types()), k -> new ArrayList<>())
                        .add(job);
            }
        }
        Map<String, Merged> merged = new TreeMap<>();
        for (var e : groups.entrySet()) {
            GroupKey k = e.getKey();
            int t = cheapestType(e.getValue(), k.types(), k.capacity());
            String key = k.pool() + '\u0000' + catalog.get(t).name() + '\u0000' + k.capacity();
            merged.computeIfAbsent(key, x -> new Merged(k.pool(), catalog.get(t), k.capacity(), new ArrayList<>()))
                    .jobs().addAll(e.getValue());
        }
        for (Merged m : merged.values()) {
            pack(m.pool(), m.type(), m.capacity(), m.jobs());
        }
        gangs.sort(Comparator.comparing(PendingJob::jobId));
        for (PendingJob g : gangs) {
            planGang(g, fit.launchFit(g, limits.get(g.pool())));
        }
    }

    /** The group's type: least cost per hour for all its workers packed, then fewer hosts, then by name. */
    private int cheapestType(List<PendingJob> group, BitSet types, Capacity capacity) {
        int maxWorker = 0;
        for (PendingJob j : group) {
            maxWorker = Math.max(maxWorker, j.gpusPerWorker());
        }
        long[] bySize = new long[maxWorker + 1];
        for (PendingJob j : group) {
            bySize[j.gpusPerWorker()] += j.workers();
        }
        int best = -1;
        double bestCost = 0;
        long bestHosts = 0;
        for (int t = types.nextSetBit(0); t >= 0; t = types.nextSetBit(t + 1)) {
            InstanceType type = catalog.get(t);
            long n = hostsNeeded(bySize, type.gpus());
            double cost = n * type.usdPerHour(capacity);
            if (best < 0 || cost < bestCost - 1e-9 || (Math.abs(cost - bestCost) <= 1e-9 && n < bestHosts)) {
                best = t;
                bestCost = cost;
                bestHosts = n;
            }
        }
        return best;
    }

    /** Hosts of {@code gpus} GPUs that best-fit-decreasing packing of these worker sizes needs. */
    static long hostsNeeded(long[] bySize, int gpus) {
        long[] openByFree = new long[gpus + 1];
        long hosts = 0;
        for (int s = bySize.length - 1; s >= 1; s--) {
            long n = bySize[s];
            while (n > 0) {
                int f = s;
                while (f <= gpus && openByFree[f] == 0) {
                    f++;
                }
                if (f > gpus) {
                    // a fresh host: as many of these workers as it holds at once
                    long perHost = gpus / s;
                    long fresh = n / perHost;
                    if (fresh == 0) {
                        hosts++;
                        openByFree[gpus - (int) (n * s)]++;
                        n = 0;
                    } else {
                        hosts += fresh;
                        openByFree[gpus - (int) (perHost * s)] += fresh;
                        n -= fresh * perHost;
                    }
                } else {
                    long take = Math.min(n, openByFree[f]);
                    openByFree[f] -= take;
                    openByFree[f - s] += take;
                    n -= take;
                }
            }
        }
        return hosts;
    }

    /** Packs jobs onto new hosts of one type: largest worker first, each on the fullest open host that holds it. */
    private void pack(String pool, InstanceType type, Capacity capacity, List<PendingJob> group) {
        group.sort((a, b) -> {
            int c = Integer.compare(b.gpusPerWorker(), a.gpusPerWorker());
            if (c == 0) {
                c = Long.compare(a.pendingSince(), b.pendingSince());
            }
            return c != 0 ? c : a.jobId().compareTo(b.jobId());
        });
        int batch = batches++;
        int gpus = type.gpus();
        IntStack[] byFree = new IntStack[gpus + 1];
        for (int f = 0; f <= gpus; f++) {
            byFree[f] = new IntStack();
        }
        double usd = type.usdPerHour(capacity);
        for (PendingJob job : group) {
            int gpw = job.gpusPerWorker();
            int[] on = new int[job.workers()];
            int distinct = 0;
            for (int w = 0; w < job.workers(); w++) {
                int f = gpw;
                while (f <= gpus && byFree[f].isEmpty()) {
                    f++;
                }
                int h;
                if (f > gpus) {
                    h = hosts.size();
                    hosts.add(new PlannedHost(h, batch, pool, type, capacity, null, usd));
                    f = gpus;
                } else {
                    h = byFree[f].pop();
                }
                byFree[f - gpw].push(h);
                boolean seen = false;
                for (int k = 0; k < distinct && !seen; k++) {
                    seen = on[k] == h;
                }
                if (!seen) {
                    on[distinct++] = h;
                }
            }
            jobs.add(new PlannedJob(job, Arrays.copyOf(on, distinct)));
        }
    }

    /** A fabric gang's own hosts: the RDMA type on which its workers cost least, all in one placement group. */
    private void planGang(PendingJob job, TypeFit.Fit f) {
        int best = -1;
        double bestCost = 0;
        int bestHosts = 0;
        for (int t = f.types().nextSetBit(0); t >= 0; t = f.types().nextSetBit(t + 1)) {
            InstanceType type = catalog.get(t);
            int perHost = type.gpus() / job.gpusPerWorker();
            int n = (job.workers() + perHost - 1) / perHost;
            double cost = n * type.usdPerHour(f.capacity());
            if (best < 0 || cost < bestCost - 1e-9 || (Math.abs(cost - bestCost) <= 1e-9 && n < bestHosts)) {
                best = t;
                bestCost = cost;
                bestHosts = n;
            }
        }
        InstanceType type = catalog.get(best);
        String group = Autoscaler.placementGroupOf(job);
        int[] on = new int[bestHosts];
        int batch = batches++;
        for (int i = 0; i < bestHosts; i++) {
            on[i] = hosts.size();
            hosts.add(new PlannedHost(on[i], batch, job.pool(), type, f.capacity(), group,
                    type.usdPerHour(f.capacity())));
        }
        jobs.add(new PlannedJob(job, on));
    }

    private static Decision skip(PendingJob job, String why) {
        return new Decision(Decision.Kind.UNPLACEABLE, job.jobId(), List.of(job.jobId()),
                "skip " + job.jobId() + ": " + why);
    }
}
