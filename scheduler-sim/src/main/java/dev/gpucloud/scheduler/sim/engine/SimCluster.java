package dev.gpucloud.scheduler.sim.engine;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.sim.cluster.ClusterModel;
import java.util.Arrays;
import java.util.List;

/**
 * The hosts of a simulation as plain arrays (GPU counts, what is in use, spot or not, prices). GPUs
 * of a host are interchangeable (one NVLink island), so only counts are tracked. A host that is
 * {@code down} (a reclaimed spot host) holds nothing; a {@code draining} one (spot notice) keeps what
 * runs on it but takes nothing new.
 */
public final class SimCluster {

    final String name;
    final String[] ids;
    final int[] gpus;
    final int[] used;
    final boolean[] spot;
    final boolean[] down;
    final boolean[] draining;
    final long[] priceMicrosPerHour;
    final long[] onDemandPriceMicrosPerHour;
    final int maxHostGpus;
    final int totalGpus;
    /** The hosts as the node agents describe them, when the cluster came from a model (else empty). */
    final List<HostInventory> inventories;

    public SimCluster(String name, String[] ids, int[] gpus, boolean[] spot, long[] price, long[] onDemandPrice) {
        this(name, ids, gpus, spot, price, onDemandPrice, List.of());
    }

    private SimCluster(String name, String[] ids, int[] gpus, boolean[] spot, long[] price, long[] onDemandPrice,
            List<HostInventory> inventories) {
        int n = ids.length;
        this.inventories = List.copyOf(inventories);
        if (gpus.length != n || spot.length != n || price.length != n || onDemandPrice.length != n) {
            throw new IllegalArgumentException("cluster " + name + ": host arrays differ in length");
        }
        this.name = name;
        this.ids = ids.clone();
        this.gpus = gpus.clone();
        this.used = new int[n];
        this.spot = spot.clone();
        this.down = new boolean[n];
        this.draining = new boolean[n];
        this.priceMicrosPerHour = price.clone();
        this.onDemandPriceMicrosPerHour = onDemandPrice.clone();
        this.maxHostGpus = Arrays.stream(gpus).max().orElse(0);
        this.totalGpus = Arrays.stream(gpus).sum();
        if (totalGpus == 0) {
            throw new IllegalArgumentException("cluster " + name + " has no GPUs");
        }
    }

    /** {@code hosts} hosts of {@code gpusPerHost} GPUs, all on demand, free of charge (the Muri cluster's shape). */
    public static SimCluster uniform(String name, int hosts, int gpusPerHost) {
        String[] ids = new String[hosts];
        int[] g = new int[hosts];
        for (int i = 0; i < hosts; i++) {
            ids[i] = name + "-" + i;
            g[i] = gpusPerHost;
        }
        return new SimCluster(name, ids, g, new boolean[hosts], new long[hosts], new long[hosts]);
    }

    /**
     * From a cluster model: each host's GPUs, capacity type and price; {@code onDemandPrice} gives the
     * on-demand price of a host (for spot hosts, the price of the same type on demand).
     */
    public static SimCluster of(ClusterModel model, java.util.function.ToLongFunction<HostInventory> onDemandPrice) {
        List<HostInventory> hosts = model.hosts();
        int n = hosts.size();
        String[] ids = new String[n];
        int[] g = new int[n];
        boolean[] s = new boolean[n];
        long[] p = new long[n];
        long[] od = new long[n];
        for (int i = 0; i < n; i++) {
            HostInventory h = hosts.get(i);
            ids[i] = h.nodeId();
            g[i] = h.gpus().size();
            s[i] = h.capacityType() == CapacityType.SPOT;
            p[i] = h.priceMicrosPerHour();
            od[i] = onDemandPrice.applyAsLong(h);
        }
        return new SimCluster(model.name(), ids, g, s, p, od, hosts);
    }

    /** The same hosts, every one on demand at its on-demand price (the baseline of a spot study). */
    public SimCluster allOnDemand() {
        List<HostInventory> od = new java.util.ArrayList<>();
        for (int i = 0; i < inventories.size(); i++) {
            HostInventory h = inventories.get(i);
            od.add(new HostInventory(h.nodeId(), h.hostname(), h.instanceType(), h.zone(), CapacityType.ON_DEMAND,
                    onDemandPriceMicrosPerHour[i], h.cpuMillis(), h.memoryMib(), h.rdmaFabric(), h.switchPath(), h.gpus(),
                    h.cachedDatasets(), h.backend(), h.observedAt()));
        }
        return new SimCluster(name + "-on-demand", ids, gpus, new boolean[ids.length], onDemandPriceMicrosPerHour,
                onDemandPriceMicrosPerHour, od);
    }

    public String name() {
        return name;
    }

    /** The hosts as HostInventory records, index = host index; empty for a cluster not built from a model. */
    public List<HostInventory> inventories() {
        return inventories;
    }

    public int hostCount() {
        return ids.length;
    }

    public int totalGpus() {
        return totalGpus;
    }

    public int maxHostGpus() {
        return maxHostGpus;
    }

    public int gpus(int host) {
        return gpus[host];
    }

    public int used(int host) {
        return used[host];
    }

    public boolean isSpot(int host) {
        return spot[host];
    }

    public boolean isDown(int host) {
        return down[host];
    }

    public boolean isDraining(int host) {
        return draining[host];
    }

    /** Whether new work may be placed on the host. */
    public boolean placeable(int host) {
        return !down[host] && !draining[host];
    }

    public String hostId(int host) {
        return ids[host];
    }

    public int spotHosts() {
        int n = 0;
        for (boolean s : spot) {
            n += s ? 1 : 0;
        }
        return n;
    }

    /** GPUs in use now over all hosts. */
    public int usedGpus() {
        int n = 0;
        for (int u : used) {
            n += u;
        }
        return n;
    }

    void reset() {
        Arrays.fill(used, 0);
        Arrays.fill(down, false);
        Arrays.fill(draining, false);
    }
}
