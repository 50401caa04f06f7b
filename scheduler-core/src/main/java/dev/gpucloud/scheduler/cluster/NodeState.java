package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.geometry.MigProfile;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One host in the scheduler's model: its GPUs, CPU and memory with what is in use, its place in the
 * RDMA switch tree (fabric, spine or block, leaf), capacity type and price, zone, and health
 * (last heard from, draining, interruption notice, latest critical XID). Mutated only by
 * {@link Fleet}; plugins read it.
 */
public final class NodeState {

    /** No time set. */
    public static final long NEVER = Long.MIN_VALUE;

    final String id;
    final String hostname;
    final String zone;
    final String instanceType;
    final CapacityType capacityType;
    final long priceMicrosPerHour;
    final int cpuMillis;
    final long memoryMib;
    final String fabric;
    final String spine;
    final String leaf;
    final GpuState[] gpus;
    final Set<String> datasets;
    final String model;
    final boolean mixedModels;
    /** MIG profile names any MIG GPU of this host offers (empty when none is in MIG mode). */
    final String[] migProfiles;
    /** Per entry of {@link #migProfiles}: see {@link #migBestPercent(String)}; kept by {@link #recount()}. */
    final int[] migBest;
    /** Per entry of {@link #migProfiles}, per GPU: the profile's ordinal in that GPU's geometry, or -1. */
    private final int[][] migOrdinals;
    int slot = -1;
    RdmaLeaf rdmaLeaf;
    int cpuUsed;
    long memoryUsed;
    int wholeFree;
    long lastHeardMillis = NEVER;
    boolean draining;
    /** An operator's cordon ({@link Fleet#cordon}): why no new work lands here; null for none. */
    String cordon;
    long interruptionDeadlineMillis = NEVER;
    long rebalanceAtMillis = NEVER;
    long lastCriticalXidMillis = NEVER;
    int lastCriticalXid;

    NodeState(HostInventory inventory) {
        this.id = inventory.nodeId();
        this.hostname = inventory.hostname();
        this.zone = inventory.zone();
        this.instanceType = inventory.instanceType();
        this.capacityType = inventory.capacityType();
        this.priceMicrosPerHour = inventory.priceMicrosPerHour();
        this.cpuMillis = inventory.cpuMillis();
        this.memoryMib = inventory.memoryMib();
        String f = inventory.rdmaFabric();
        // a host whose reported RDMA ports are all down is no fabric member until one is up again; a host
        // that reports no ports (an older agent, no sysfs to read) keeps its configured fabric
        boolean portsDown = !inventory.rdmaNics().isEmpty() && !inventory.hasActiveRdma();
        this.fabric = f == null || f.isBlank() || portsDown ? null : f;
        List<String> path = inventory.switchPath();
        this.leaf = path.isEmpty() ? (fabric == null ? null : fabric + "/leaf") : path.get(path.size() - 1);
        this.spine = path.size() >= 2 ? path.get(0) : (fabric == null ? null : fabric + "/spine");
        List<GpuDevice> devices = inventory.gpus().stream()
                .sorted(java.util.Comparator.comparingInt(GpuDevice::index)).toList();
        this.gpus = new GpuState[devices.size()];
        for (int i = 0; i < gpus.length; i++) {
            gpus[i] = new GpuState(devices.get(i));
        }
        this.datasets = Set.copyOf(inventory.cachedDatasets());
        this.model = gpus.length == 0 ? "" : gpus[0].model;
        boolean mixed = false;
        for (GpuState g : gpus) {
            mixed |= !g.model.equals(model);
        }
        this.mixedModels = mixed;
        Set<String> names = new LinkedHashSet<>();
        for (GpuState g : gpus) {
            if (g.mig != null) {
                for (MigProfile p : g.mig.profiles()) {
                    names.add(p.name());
                }
            }
        }
        this.migProfiles = names.toArray(new String[0]);
        this.migBest = new int[migProfiles.length];
        this.migOrdinals = new int[migProfiles.length][gpus.length];
        for (int k = 0; k < migProfiles.length; k++) {
            for (int i = 0; i < gpus.length; i++) {
                migOrdinals[k][i] = gpus[i].mig == null ? -1 : gpus[i].mig.ordinal(migProfiles[k]);
            }
        }
        recount();
    }

    void recount() {
        int free = 0;
        for (GpuState g : gpus) {
            if (g.isWholeFree()) {
                free++;
            }
        }
        wholeFree = free;
        for (int k = 0; k < migProfiles.length; k++) {
            int best = -1;
            int[] ordinals = migOrdinals[k];
            for (int i = 0; i < gpus.length; i++) {
                if (ordinals[i] >= 0) {
                    best = Math.max(best, gpus[i].mig.percentAfter(ordinals[i], gpus[i].migMask));
                }
            }
            migBest[k] = best;
        }
    }

    /** The brute-force value of {@link #migBestPercent(String)}: walks every MIG GPU's geometry (for tests). */
    int computeMigBest(String profile) {
        int best = -1;
        for (GpuState g : gpus) {
            if (g.mig == null) {
                continue;
            }
            MigProfile p = g.mig.profile(profile).orElse(null);
            if (p == null || g.mig.bestStart(p, g.migMask) < 0) {
                continue;
            }
            best = Math.max(best, 100 * (g.mig.slicesUsed(g.migMask) + p.memorySlices()) / g.mig.memorySlices());
        }
        return best;
    }

    /**
     * How full (percent of its memory slices) the fullest MIG GPU of this host that can still take
     * {@code profile} would be after taking it, over MIG GPUs of any model; -1 when no MIG GPU here
     * has a free legal start for the profile. Kept current on every change, so a MIG decision reads
     * it instead of walking the GPUs' geometry.
     */
    public int migBestPercent(String profile) {
        for (int k = 0; k < migProfiles.length; k++) {
            if (migProfiles[k].equals(profile)) {
                return migBest[k];
            }
        }
        return -1;
    }

    public String id() {
        return id;
    }

    public String hostname() {
        return hostname;
    }

    public String zone() {
        return zone;
    }

    public String instanceType() {
        return instanceType;
    }

    public CapacityType capacityType() {
        return capacityType;
    }

    public long priceMicrosPerHour() {
        return priceMicrosPerHour;
    }

    /** The host's price per GPU-hour (its whole price when it has no GPU). */
    public long pricePerGpuMicros() {
        return gpus.length == 0 ? priceMicrosPerHour : priceMicrosPerHour / gpus.length;
    }

    public int cpuMillis() {
        return cpuMillis;
    }

    public int cpuFree() {
        return cpuMillis - cpuUsed;
    }

    public long memoryMib() {
        return memoryMib;
    }

    public long memoryFree() {
        return memoryMib - memoryUsed;
    }

    /** The RDMA fabric, or null when the host has none. */
    public String fabric() {
        return fabric;
    }

    public String spine() {
        return spine;
    }

    public String leaf() {
        return leaf;
    }

    public int gpuCount() {
        return gpus.length;
    }

    public GpuState gpu(int i) {
        return gpus[i];
    }

    /** The GPU with this device index, or null. */
    public GpuState gpuByIndex(int index) {
        for (GpuState g : gpus) {
            if (g.index == index) {
                return g;
            }
        }
        return null;
    }

    /** The model of the host's first GPU; see {@link #mixedModels()}. */
    public String model() {
        return model;
    }

    public boolean mixedModels() {
        return mixedModels;
    }

    public int wholeFree() {
        return wholeFree;
    }

    public Set<String> datasets() {
        return datasets;
    }

    public long lastHeardMillis() {
        return lastHeardMillis;
    }

    /** No new work lands here: the host's agent drains it, or an operator cordoned it. */
    public boolean draining() {
        return draining || cordon != null;
    }

    /** Why an operator cordoned the host; null if none did. */
    public String cordon() {
        return cordon;
    }

    public long interruptionDeadlineMillis() {
        return interruptionDeadlineMillis;
    }

    public long rebalanceAtMillis() {
        return rebalanceAtMillis;
    }

    public long lastCriticalXidMillis() {
        return lastCriticalXidMillis;
    }

    public int lastCriticalXid() {
        return lastCriticalXid;
    }

    /** Spot pool: capacity of one instance type in one zone, which clouds reclaim together. */
    public String pool() {
        return zone + "/" + instanceType;
    }

    @Override
    public String toString() {
        return id + "(" + wholeFree + "/" + gpus.length + " " + model + " free)";
    }
}
