package dev.gpucloud.autoscaler.core;

import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which instance types can hold a job: its GPU models, a worker's GPUs on one host, RDMA for a fabric gang, the
 * capacity it may run on, and its price ceiling (its share of a host's price, by GPUs). For a job no type can hold,
 * says why, naming the first constraint that empties the list. Results are cached by the job's shape: ten thousand
 * pending jobs come in few shapes.
 */
final class TypeFit {

    /** The types a job may be launched on, at which capacity; or why there are none. */
    record Fit(BitSet types, Capacity capacity, String unplaceable) {
        boolean placeable() {
            return unplaceable == null;
        }
    }

    private record Key(String pool, List<String> models, int gpusPerWorker, int totalGpus, boolean fabric,
            CapacityPreference preference, boolean checkpointable, double ceiling) {}

    private final Catalog catalog;
    private final Map<List<String>, BitSet> byModels = new HashMap<>();
    private final Map<String, BitSet> byPool = new HashMap<>();
    private final Map<Key, Fit> fits = new HashMap<>();

    TypeFit(Catalog catalog) {
        this.catalog = catalog;
    }

    /** The catalog types a pool may use. */
    BitSet poolTypes(String pool, PoolLimits limits) {
        return byPool.computeIfAbsent(pool, p -> {
            BitSet b = new BitSet(catalog.size());
            for (int i = 0; i < catalog.size(); i++) {
                if (limits.allows(catalog.get(i).name())) {
                    b.set(i);
                }
            }
            return b;
        });
    }

    /** Whether an existing host of catalog type {@code typeIndex}, bought as {@code capacity}, can take the job. */
    boolean hostFits(PendingJob job, BitSet jobModels, int typeIndex, Capacity capacity) {
        InstanceType t = catalog.get(typeIndex);
        if (capacity == Capacity.SPOT && !job.acceptsSpotHost()) {
            return false;
        }
        if (job.gpusPerWorker() > t.gpus() || (job.needsFabric() && !t.rdma())) {
            return false;
        }
        if (!jobModels.get(typeIndex)) {
            return false;
        }
        // per GPU, so that jobs of one shape and one ceiling per GPU get one answer whatever their size
        return !job.hasPriceCeiling() || perGpu(t, capacity) <= job.maxUsdPerHour() / job.totalGpus();
    }

    /** The types the job may be launched on in its pool. */
    Fit launchFit(PendingJob job, PoolLimits limits) {
        Key key = new Key(job.pool(), job.gpuModels(), job.gpusPerWorker(), job.hasPriceCeiling() ? job.totalGpus() : 0,
                job.needsFabric(), job.capacity(), job.checkpointable(),
                job.hasPriceCeiling() ? job.maxUsdPerHour() : 0);
        Fit fit = fits.get(key);
        if (fit == null) {
            fit = compute(job, limits);
            fits.put(key, fit);
        }
        return fit;
    }

    private Fit compute(PendingJob job, PoolLimits limits) {
        String models = Text.models(job.gpuModels());
        BitSet set = (BitSet) poolTypes(job.pool(), limits).clone();
        set.and(models(job.gpuModels()));
        String where = limits.instanceTypes().isEmpty() ? "" : " among pool " + job.pool() + "'s types";
        if (set.isEmpty()) {
            return none("no instance type" + where + " has GPU model " + models);
        }
        int largest = 0;
        for (int i = set.nextSetBit(0); i >= 0; i = set.nextSetBit(i + 1)) {
            largest = Math.max(largest, catalog.get(i).gpus());
            if (catalog.get(i).gpus() < job.gpusPerWorker()) {
                set.clear(i);
            }
        }
        if (set.isEmpty()) {
            return none("no instance type" + where + " holds " + job.gpusPerWorker() + " GPUs of " + models
                    + " on one host (the largest has " + largest + ")");
        }
        if (job.needsFabric()) {
            for (int i = set.nextSetBit(0); i >= 0; i = set.nextSetBit(i + 1)) {
                if (!catalog.get(i).rdma()) {
                    set.clear(i);
                }
            }
            if (set.isEmpty()) {
                return none("no RDMA-capable instance type" + where + " has " + job.gpusPerWorker() + " GPUs of "
                        + models + " per host, and the job's " + job.workers() + " workers need one fabric");
            }
        }
        Capacity capacity = job.launchCapacity();
        if (capacity == Capacity.SPOT) {
            BitSet spot = (BitSet) set.clone();
            for (int i = spot.nextSetBit(0); i >= 0; i = spot.nextSetBit(i + 1)) {
                if (!catalog.get(i).offersSpot()) {
                    spot.clear(i);
                }
            }
            if (!spot.isEmpty()) {
                set = spot;
            } else if (job.capacity() == CapacityPreference.SPOT) {
                return none("no instance type" + where + " with " + job.gpusPerWorker() + " GPUs of " + models
                        + " is sold as spot, and the job asked for spot");
            } else {
                capacity = Capacity.ON_DEMAND;
            }
        }
        if (job.hasPriceCeiling()) {
            int cheapest = -1;
            double cheapestShare = Double.POSITIVE_INFINITY;
            for (int i = set.nextSetBit(0); i >= 0; i = set.nextSetBit(i + 1)) {
                double s = share(job, catalog.get(i), capacity);
                if (s < cheapestShare) {
                    cheapestShare = s;
                    cheapest = i;
                }
                if (s > job.maxUsdPerHour()) {
                    set.clear(i);
                }
            }
            if (set.isEmpty()) {
                return none("price ceiling " + Text.usd2(job.maxUsdPerHour()) + " USD/h: the cheapest fit, "
                        + catalog.get(cheapest).name() + " " + capacity + ", costs " + Text.usd2(cheapestShare)
                        + " USD/h for the job's " + job.totalGpus() + " GPU(s)");
            }
        }
        return new Fit(set, capacity, null);
    }

    /** The catalog types with a GPU model of these (all types for none). */
    BitSet models(List<String> models) {
        BitSet b = byModels.get(models);
        if (b == null) {
            b = new BitSet(catalog.size());
            for (int i = 0; i < catalog.size(); i++) {
                InstanceType t = catalog.get(i);
                boolean ok = models.isEmpty();
                for (int m = 0; !ok && m < models.size(); m++) {
                    ok = t.hasModel(models.get(m));
                }
                if (ok) {
                    b.set(i);
                }
            }
            byModels.put(models, b);
        }
        return b;
    }

    /** The job's share of a host's price: the host's price per GPU times the job's GPUs. */
    static double share(PendingJob job, InstanceType t, Capacity capacity) {
        return perGpu(t, capacity) * job.totalGpus();
    }

    private static double perGpu(InstanceType t, Capacity capacity) {
        double p = t.usdPerHour(capacity);
        if (Double.isNaN(p)) {
            p = t.onDemandUsdPerHour();
        }
        return p / t.gpus();
    }

    private static Fit none(String why) {
        return new Fit(null, null, why);
    }
}
