package dev.gpucloud.contracts.events;

import java.util.List;

/**
 * One physical GPU as the host describes it. {@code nvlinkIsland} groups GPUs that reach each
 * other over NVLink (-1: none).
 */
public record GpuDevice(
        int index,
        String uuid,
        String model,
        long memoryMib,
        String pciBusId,
        int nvlinkIsland,
        boolean migEnabled,
        List<MigInstance> migInstances) {

    public GpuDevice {
        Require.atLeast(index, 0, "index");
        Require.text(uuid, "uuid");
        Require.text(model, "model");
        Require.atLeast(memoryMib, 1, "memoryMib");
        Require.atLeast(nvlinkIsland, -1, "nvlinkIsland");
        migInstances = Require.list(migInstances, "migInstances");
    }
}
