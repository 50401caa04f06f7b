package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A cluster the simulator runs on, as the same {@link HostInventory} records the node agents
 * publish, so that the production placement code places jobs on it unchanged. Host ids are unique.
 */
public record ClusterModel(String name, List<HostInventory> hosts) {

    /** The simulated clock's zero: hosts of a model were all "heard from" then. */
    public static final Instant SIM_EPOCH = Instant.EPOCH;
    /** {@link HostInventory#backend()} of every simulated host. */
    public static final String BACKEND = "simulated";

    public ClusterModel {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a cluster model needs a name");
        }
        hosts = List.copyOf(hosts);
        Set<String> ids = new HashSet<>();
        for (HostInventory host : hosts) {
            if (!ids.add(host.nodeId())) {
                throw new IllegalArgumentException("cluster " + name + ": host id " + host.nodeId() + " appears twice");
            }
        }
    }

    public int hostCount() {
        return hosts.size();
    }

    public int gpuCount() {
        return hosts.stream().mapToInt(h -> h.gpus().size()).sum();
    }

    /** GPUs per model, by model name. */
    public Map<String, Integer> gpusByModel() {
        Map<String, Integer> counts = new TreeMap<>();
        for (HostInventory host : hosts) {
            for (GpuDevice gpu : host.gpus()) {
                counts.merge(gpu.model(), 1, Integer::sum);
            }
        }
        return counts;
    }

    public long cpuMillis() {
        return hosts.stream().mapToLong(HostInventory::cpuMillis).sum();
    }

    public long memoryMib() {
        return hosts.stream().mapToLong(HostInventory::memoryMib).sum();
    }

    /** What the whole cluster costs per hour at its hosts' own prices (spot hosts at spot price), micro-USD. */
    public long priceMicrosPerHour() {
        return hosts.stream().mapToLong(HostInventory::priceMicrosPerHour).sum();
    }

    public long hostCount(CapacityType capacity) {
        return hosts.stream().filter(h -> h.capacityType() == capacity).count();
    }

    /** A fresh scheduler view of this cluster with every host present and nothing allocated. */
    public Fleet toFleet() {
        Fleet fleet = new Fleet();
        for (HostInventory host : hosts) {
            fleet.upsert(host, SIM_EPOCH.toEpochMilli());
        }
        return fleet;
    }

    /** One simulated GPU. */
    static GpuDevice gpu(String nodeId, int index, String model, long memoryMib, int nvlinkIsland) {
        return new GpuDevice(index, nodeId + "-gpu" + index, model, memoryMib, null, nvlinkIsland, false, List.of());
    }
}
