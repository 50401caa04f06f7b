package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;

/**
 * A host's description on {@code gpu.inventory} (compacted, keyed by nodeId; a tombstone when the
 * host leaves). {@code switchPath} lists the RDMA switches from the fabric's top down to the host's
 * leaf, e.g. ["spine-1", "leaf-3"]. {@code backend} says where GPU facts came from: nvml,
 * nvidia-smi or simulated.
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
        Instant observedAt) {

    public HostInventory {
        Require.text(nodeId, "nodeId");
        Require.text(hostname, "hostname");
        Require.text(instanceType, "instanceType");
        Require.text(zone, "zone");
        Require.present(capacityType, "capacityType");
        Require.atLeast(priceMicrosPerHour, 0, "priceMicrosPerHour");
        Require.atLeast(cpuMillis, 0, "cpuMillis");
        Require.atLeast(memoryMib, 0, "memoryMib");
        switchPath = Require.list(switchPath, "switchPath");
        gpus = Require.list(gpus, "gpus");
        cachedDatasets = Require.list(cachedDatasets, "cachedDatasets");
        Require.text(backend, "backend");
        Require.present(observedAt, "observedAt");
    }
}
