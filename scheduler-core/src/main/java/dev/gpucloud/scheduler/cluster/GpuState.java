package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.geometry.GpuAdmission;
import dev.gpucloud.geometry.MigFamily;
import dev.gpucloud.geometry.NvidiaMigTable;

/**
 * One GPU's live state in the scheduler's model. A MIG-enabled GPU is carved into slices (its
 * {@code migMask} is the occupancy of the instances placed on it, see {@link MigFamily#occupancy}); any
 * other GPU is held whole or shared by milli ({@code usedMilli}, 1000 = wholly used). What fits is
 * {@link GpuAdmission}'s rule, the one the agents check with. Mutated only by {@link Fleet}.
 */
public final class GpuState {

    final int index;
    final String uuid;
    final String model;
    final long memoryMib;
    final int island;
    final MigFamily mig;
    int usedMilli;
    int migMask;

    GpuState(GpuDevice device) {
        this.index = device.index();
        this.uuid = device.uuid();
        this.model = device.model();
        this.memoryMib = device.memoryMib();
        this.island = device.nvlinkIsland();
        // a GPU in MIG mode of a model the table lacks takes nothing, as on the agent
        this.mig = device.migEnabled() ? NvidiaMigTable.forGpu(device.model(), device.memoryMib())
                .orElseGet(() -> NvidiaMigTable.unlisted(device.model())) : null;
    }

    public int index() {
        return index;
    }

    public String uuid() {
        return uuid;
    }

    public String model() {
        return model;
    }

    public long memoryMib() {
        return memoryMib;
    }

    public int island() {
        return island;
    }

    /** The MIG family of this GPU when MIG mode is on, else null. */
    public MigFamily mig() {
        return mig;
    }

    public int usedMilli() {
        return usedMilli;
    }

    public int freeMilli() {
        return mig != null ? 0 : 1000 - usedMilli;
    }

    public int migMask() {
        return migMask;
    }

    /** Free as a whole GPU: not MIG, nothing on it. */
    public boolean isWholeFree() {
        return GpuAdmission.shareFits(mig, usedMilli, GpuAdmission.WHOLE_GPU_MILLI);
    }

    /** Shared by fractions and not full. */
    public boolean isPartial() {
        return mig == null && usedMilli > 0 && usedMilli < 1000;
    }
}
