package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
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
        Check.number(index, Limits.GPU_INDEX, "index");
        Check.text(uuid, Limits.LABEL_TEXT, "uuid");
        Check.text(model, Limits.GPU_MODEL, "model");
        Check.optionalText(pciBusId, Limits.LABEL_TEXT, "pciBusId");
        Require.atLeast(memoryMib, 1, "memoryMib");
        Require.atLeast(nvlinkIsland, -1, "nvlinkIsland");
        migInstances = Require.list(migInstances, "migInstances");
    }
}
