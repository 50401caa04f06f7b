package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;
import java.util.List;

/**
 * A host's description on {@code gpu.inventory} (compacted, keyed by nodeId; a tombstone when the
 * host leaves). {@code switchPath} lists the RDMA switches from the fabric's top down to the host's
 * leaf, e.g. ["spine-1", "leaf-3"]. {@code backend} says where GPU facts came from: nvml,
 * nvidia-smi or simulated. {@code rdmaNics} lists the host's RDMA NIC ports as the agent read them
 * from /sys/class/infiniband (empty when it has none or an older agent sent the record).
 */
public record HostInventory(
        String nodeId,
        String hostname,
        String instanceType,
        String zone,
        CapacityType capacityType,
        long priceMicrosPerHour,
        int cpuMillis,
        long memoryMib,
        String rdmaFabric,
        List<String> switchPath,
        List<GpuDevice> gpus,
        List<String> cachedDatasets,
        String backend,
        Instant observedAt,
        List<RdmaNic> rdmaNics) {

    public HostInventory {
        Check.text(nodeId, Limits.ID, "nodeId");
        Check.text(hostname, Limits.HOSTNAME, "hostname");
        Check.text(instanceType, Limits.LABEL_TEXT, "instanceType");
        Check.text(zone, Limits.LABEL_TEXT, "zone");
        Check.optionalText(rdmaFabric, Limits.LABEL_TEXT, "rdmaFabric");
        Require.present(capacityType, "capacityType");
        Require.atLeast(priceMicrosPerHour, 0, "priceMicrosPerHour");
        Require.atLeast(cpuMillis, 0, "cpuMillis");
        Require.atLeast(memoryMib, 0, "memoryMib");
        switchPath = Require.list(switchPath, "switchPath");
        Check.size(switchPath, Limits.SHORT_LIST, "switchPath");
        gpus = Check.size(Require.list(gpus, "gpus"), Limits.GPUS_PER_HOST, "gpus");
        cachedDatasets = Check.size(Require.list(cachedDatasets, "cachedDatasets"), Limits.SHORT_LIST,
                "cachedDatasets");
        Require.text(backend, "backend");
        Require.present(observedAt, "observedAt");
        rdmaNics = Require.list(rdmaNics, "rdmaNics");
    }

    /** A description without RDMA NIC ports (a host without them, or one that does not read them). */
    public HostInventory(String nodeId, String hostname, String instanceType, String zone, CapacityType capacityType,
            long priceMicrosPerHour, int cpuMillis, long memoryMib, String rdmaFabric, List<String> switchPath,
            List<GpuDevice> gpus, List<String> cachedDatasets, String backend, Instant observedAt) {
        this(nodeId, hostname, instanceType, zone, capacityType, priceMicrosPerHour, cpuMillis, memoryMib, rdmaFabric,
                switchPath, gpus, cachedDatasets, backend, observedAt, List.of());
    }

    /** The same description with its RDMA NIC ports. */
    public HostInventory withRdmaNics(List<RdmaNic> nics) {
        return new HostInventory(nodeId, hostname, instanceType, zone, capacityType, priceMicrosPerHour, cpuMillis,
                memoryMib, rdmaFabric, switchPath, gpus, cachedDatasets, backend, observedAt, nics);
    }

    /** Whether the host has at least one RDMA port in state ACTIVE. */
    public boolean hasActiveRdma() {
        return rdmaNics.stream().anyMatch(RdmaNic::active);
    }
}
