package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Lays pending jobs on the GPUs supply already has or has asked for, so that the autoscaler launches only for the
 * rest: hosts that are LAUNCHING are on their way, and launching again for their jobs would launch without end.
 * Fabric gangs go first, each into one placement group whose hosts can hold all its workers (its own group first);
 * then the other jobs, largest worker first, each worker on one host; the workers of a job that find no room are
 * left to launch for. This estimates what the scheduler will place; it does not place.
 */
final class SupplyAbsorber {

    /** Hosts of one type, capacity and readiness in a pool, by free GPUs. */
    private static final class SlotClass {
        final int typeIndex;
        final Capacity capacity;
        final boolean launching;
        final IntStack[] byFree;

        SlotClass(int typeIndex, Capacity capacity, boolean launching, int gpus) {
            this.typeIndex = typeIndex;
            this.capacity = capacity;
            this.launching = launching;
            this.byFree = new IntStack[gpus + 1];
            for (int f = 0; f <= gpus; f++) {
                byFree[f] = new IntStack();
            }
        }
    }

    private final SupplyState supply;
    private final Catalog catalog;
    private final TypeFit fit;
    /** Per pool, the jobs laid on supply, in the order they were. */
    final Map<String, List<PendingJob>> absorbed = new TreeMap<>();

    SupplyAbsorber(SupplyState supply, Catalog catalog, TypeFit fit) {
        this.supply = supply;
        this.catalog = catalog;
        this.fit = fit;
    }

    /** Lays what fits on supply, marking the hosts it uses as needed; answers the jobs that did not fit. */
    List<PendingJob> absorb(List<PendingJob> jobs) {
        List<PendingJob> gangs = new ArrayList<>();
        List<PendingJob> others = new ArrayList<>();
        for (PendingJob j : jobs) {
            (j.needsFabric() ? gangs : others).add(j);
        }
        List<PendingJob> rest = new ArrayList<>();
        absorbGangs(gangs, rest);
        absorbOthers(others, rest);
        return rest;
    }

    private void absorbGangs(List<PendingJob> gangs, List<PendingJob> rest) {
        if (gangs.isEmpty()) {
            return;
        }
        Map<String, Map<String, List<Integer>>> groups = new TreeMap<>();
        for (int i = 0; i < supply.hosts.length; i++) {
            Host h = supply.hosts[i];
            if (supply.takesDemand(i) && h.placementGroup() != null && supply.types[i].rdma()) {
                groups.computeIfAbsent(h.pool(), p -> new TreeMap<>())
                        .computeIfAbsent(h.placementGroup(), g -> new ArrayList<>()).add(i);
            }
        }
        gangs.sort(Comparator.comparingInt(PendingJob::totalGpus).reversed()
                .thenComparingLong(PendingJob::pendingSince).thenComparing(PendingJob::jobId));
        for (PendingJob job : gangs) {
            Map<String, List<Integer>> pool = groups.getOrDefault(job.pool(), Map.of());
            BitSet models = fit.models(job.gpuModels());
            List<Integer> own = pool.get(Autoscaler.placementGroupOf(job));
            boolean placed = own != null && tryGang(job, models, own);
            for (var it = pool.entrySet().iterator(); !placed && it.hasNext(); ) {
                var e = it.next();
                placed = e.getValue() != own && tryGang(job, models, e.getValue());
            }
            if (placed) {
                absorbed.computeIfAbsent(job.pool(), p -> new ArrayList<>()).add(job);
            } else {
                rest.add(job);
            }
        }
    }

    private boolean tryGang(PendingJob job, BitSet models, List<Integer> group) {
        int gpw = job.gpusPerWorker();
        int slots = 0;
        for (int i : group) {
            if (fits(job, models, i)) {
                slots += supply.free[i] / gpw;
            }
        }
        if (slots < job.workers()) {
            return false;
        }
        int left = job.workers();
        for (int i : group) {
            if (left > 0 && fits(job, models, i)) {
                int take = Math.min(left, supply.free[i] / gpw);
                if (take > 0) {
                    supply.free[i] -= take * gpw;
                    supply.needed[i] = true;
                    left -= take;
                }
            }
        }
        return true;
    }

    private boolean fits(PendingJob job, BitSet models, int host) {
        return fit.hostFits(job, models, catalog.indexOf(supply.types[host].name()), supply.hosts[host].capacity());
    }

    private void absorbOthers(List<PendingJob> jobs, List<PendingJob> rest) {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, List<SlotClass>> classes = slotClasses();
        // Largest worker first; among equals the least flexible first (fewer types, on demand only), so that a job
        // that runs anywhere does not take the host that was launched for one that runs on one type only.
        jobs.sort(Comparator.comparingInt(PendingJob::gpusPerWorker).reversed()
                .thenComparingInt(this::flexibility)
                .thenComparingLong(PendingJob::pendingSince).thenComparing(PendingJob::jobId));
        List<SlotClass> feasible = new ArrayList<>();
        for (PendingJob job : jobs) {
            List<SlotClass> pool = classes.get(job.pool());
            feasible.clear();
            if (pool != null) {
                BitSet models = fit.models(job.gpuModels());
                for (SlotClass c : pool) {
                    if (fit.hostFits(job, models, c.typeIndex, c.capacity)) {
                        feasible.add(c);
                    }
                }
            }
            int placed = 0;
            while (placed < job.workers() && placeWorker(feasible, job.gpusPerWorker())) {
                placed++;
            }
            if (placed == job.workers()) {
                absorbed.computeIfAbsent(job.pool(), p -> new ArrayList<>()).add(job);
            }
            if (placed < job.workers()) {
                // the workers that found no free GPUs are launched for; the others wait where they fit
                rest.add(placed == 0 ? job : new PendingJob(job.jobId(), job.pool(), job.workers() - placed,
                        job.gpusPerWorker(), job.gpuModels(), false, job.capacity(), job.checkpointable(),
                        job.maxUsdPerHour(), job.pendingSince()));
            }
        }
    }

    private int flexibility(PendingJob job) {
        return fit.models(job.gpuModels()).cardinality() * (job.acceptsSpotHost() ? 2 : 1);
    }

    /** One worker on the fullest host that still holds it, in the first class that has one. */
    private boolean placeWorker(List<SlotClass> feasible, int gpw) {
        for (int ci = 0; ci < feasible.size(); ci++) {
            SlotClass c = feasible.get(ci);
            for (int f = gpw; f < c.byFree.length; f++) {
                if (!c.byFree[f].isEmpty()) {
                    int h = c.byFree[f].pop();
                    c.byFree[f - gpw].push(h);
                    supply.free[h] -= gpw;
                    supply.needed[h] = true;
                    return true;
                }
            }
        }
        return false;
    }

    /** Per pool, the hosts with free GPUs in classes: registered hosts before launching ones, then by type. */
    private Map<String, List<SlotClass>> slotClasses() {
        Map<String, Map<String, SlotClass>> byKey = new TreeMap<>();
        for (int i = 0; i < supply.hosts.length; i++) {
            if (!supply.takesDemand(i) || supply.free[i] <= 0) {
                continue;
            }
            Host h = supply.hosts[i];
            InstanceType t = supply.types[i];
            boolean launching = h.state() == HostState.LAUNCHING;
            String key = (launching ? "1 " : "0 ") + t.name() + " " + h.capacity();
            SlotClass c = byKey.computeIfAbsent(h.pool(), p -> new TreeMap<>()).computeIfAbsent(key,
                    k -> new SlotClass(catalog.indexOf(t.name()), h.capacity(), launching, t.gpus()));
            c.byFree[supply.free[i]].push(i);
        }
        Map<String, List<SlotClass>> out = new TreeMap<>();
        byKey.forEach((pool, m) -> out.put(pool, new ArrayList<>(m.values())));
        return out;
    }
}
