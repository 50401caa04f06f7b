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
 * Lays pending jobs on the GPUs supply already has or has asked for, so that the autoscaler launches only for the
 * rest: hosts that are LAUNCHING are on their way, and launching again for their jobs would launch without end.
 * Fabric gangs go first, each into one placement group whose hosts can hold all its workers (their own groups first);
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
        // each gang into its own placement group first, so that a new gang does not take the hosts on their way
        // to another; then the gangs still waiting into what is left of any group
        List<PendingJob> unplaced = new ArrayList<>();
        for (PendingJob job : gangs) {
            List<Integer> own = groups.getOrDefault(job.pool(), Map.of()).get(Autoscaler.placementGroupOf(job));
            if (own != null && tryGang(job, fit.models(job.gpuModels()), own)) {
                absorbed.computeIfAbsent(job.pool(), p -> new ArrayList<>()).add(job);
            } else {
                unplaced.add(job);
            }
        }
        for (PendingJob job : unplaced) {
            BitSet models = fit.models(job.gpuModels());
            boolean placed = false;
            for (var it = groups.getOrDefault(job.pool(), Map.of()).values().iterator(); !placed && it.hasNext(); ) {
                placed = tryGang(job, models, it.next());
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

    /** A job with what absorbing it needs, computed once per shape. */
    private record Entry(PendingJob job, int flexibility, List<SlotClass> feasible) {}

    /** What decides which hosts a job may take: ten thousand jobs come in few shapes. */
    private record Shape(String pool, List<String> models, int gpusPerWorker, boolean acceptsSpot,
            double ceilingPerGpu) {}

    private void absorbOthers(List<PendingJob> jobs, List<PendingJob> rest) {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, List<SlotClass>> classes = slotClasses();
        Map<Shape, Entry> shapes = new HashMap<>();
        Entry[] entries = new Entry[jobs.size()];
        for (int k = 0; k < entries.length; k++) {
            PendingJob job = jobs.get(k);
            Shape shape = new Shape(job.pool(), job.gpuModels(), job.gpusPerWorker(), job.acceptsSpotHost(),
                    job.hasPriceCeiling() ? job.maxUsdPerHour() / job.totalGpus() : 0);
            Entry e = shapes.get(shape);
            if (e == null) {
                BitSet models = fit.models(job.gpuModels());
                List<SlotClass> feasible = new ArrayList<>();
                for (SlotClass c : classes.getOrDefault(job.pool(), List.of())) {
                    if (fit.hostFits(job, models, c.typeIndex, c.capacity)) {
                        feasible.add(c);
                    }
                }
                e = new Entry(null, models.cardinality() * (job.acceptsSpotHost() ? 2 : 1), feasible);
                shapes.put(shape, e);
            }
            entries[k] = new Entry(job, e.flexibility(), e.feasible());
        }
        // Largest worker first; among equals the least flexible first (fewer types, on demand only), so that a job
        // that runs anywhere does not take the host that was launched for one that runs on one type only.
        Arrays.sort(entries, (a, b) -> {
            int c = Integer.compare(b.job().gpusPerWorker(), a.job().gpusPerWorker());
            if (c == 0) {
                c = Integer.compare(a.flexibility(), b.flexibility());
            }
            if (c == 0) {
                c = Long.compare(a.job().pendingSince(), b.job().pendingSince());
            }
            return c != 0 ? c : a.job().jobId().compareTo(b.job().jobId());
        });
        for (Entry e : entries) {
            PendingJob job = e.job();
            int placed = 0;
            while (placed < job.workers() && placeWorker(e.feasible(), job.gpusPerWorker())) {
                placed++;
            }
            if (placed == job.workers()) {
                absorbed.computeIfAbsent(job.pool(), p -> new ArrayList<>()).add(job);
            } else {
                // the workers that found no free GPUs are launched for; the others wait where they fit
                rest.add(placed == 0 ? job : new PendingJob(job.jobId(), job.pool(), job.workers() - placed,
                        job.gpusPerWorker(), job.gpuModels(), false, job.capacity(), job.checkpointable(),
                        job.maxUsdPerHour(), job.pendingSince()));
            }
        }
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
