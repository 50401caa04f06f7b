package dev.gpucloud.scheduler.cluster;

import dev.gpucloud.contracts.events.GpuDevice;

/**
 * One GPU's live state in the scheduler's model. A MIG-enabled GPU is carved into slices (its
 * {@code migMask} marks the memory slices in use); any other GPU is held whole or shared by milli
 * ({@code usedMilli}, 1000 = wholly used). Mutated only by {@link Fleet}.
 */
public final class GpuState {

    final int index;
    final String uuid;
    final String model;
    final long memoryMib;
    final int island;
    final MigGeometry mig;
    int usedMilli;
    int migMask;

    GpuState(GpuDevice device) {
        this.index = device.index();
        this.uuid = device.uuid();
        this.model = device.model();
        this.memoryMib = device.memoryMib();
        this.island = device.nvlinkIsland();
        this.mig = device.migEnabled() ? MigGeometry.of(device.model(), device.memoryMib()).orElse(null) : null;
    }

    GpuState(int index, String model, long memoryMib, int island, MigGeometry mig) {
        this.index = index;
        this.uuid = "GPU-" + index;
        this.model = model;
        this.memoryMib = memoryMib;
        this.island = island;
        this.mig = mig;
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

    /** The MIG rules of this GPU when MIG mode is on, else null. */
    public MigGeometry mig() {
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
        return mig == null && usedMilli == 0;
    }

    /** Shared by fractions and not full. */
    public boolean isPartial() {
        return mig == null && usedMilli > 0 && usedMilli < 1000;
    }
}
