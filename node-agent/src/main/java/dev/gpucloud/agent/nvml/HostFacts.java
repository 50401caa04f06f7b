package dev.gpucloud.agent.nvml;

import dev.gpucloud.contracts.events.CapacityType;
import java.util.List;

/**
 * What a real host's inventory says beyond its GPUs, which NVML cannot know: where the host is
 * and how it is bought (from configuration until the cloud metadata service is read).
 */
public record HostFacts(
        String nodeId,
        String hostname,
        String instanceType,
        String zone,
        CapacityType capacityType,
        long priceMicrosPerHour,
        int cpuMillis,
        long memoryMib,
        String rdmaFabric,
        List<String> switchPath) {

    public HostFacts {
        switchPath = List.copyOf(switchPath);
    }
}
