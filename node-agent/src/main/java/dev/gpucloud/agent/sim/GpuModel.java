package dev.gpucloud.agent.sim;

import dev.gpucloud.contracts.events.GpuModels;

/**
 * The GPU models the simulation knows, with the figures its readings are drawn around: memory,
 * power limit (TDP) and idle draw, clocks, whether the memory reports a temperature (HBM does,
 * GDDR does not), and the MIG slice a MIG-enabled GPU is cut into (seven of them).
 */
public enum GpuModel {
    A100_SXM4_40GB(GpuModels.A100_SXM4_40GB, 40_960, 400, 55, 1410, 1215, true, "1g.5gb", 4_864),
    H100_SXM5_80GB(GpuModels.H100_SXM5_80GB, 81_559, 700, 70, 1980, 2619, true, "1g.10gb", 9_856),
    A10G(GpuModels.A10G, 23_028, 300, 25, 1710, 6251, false, null, 0),
    V100_SXM2_16GB(GpuModels.V100_SXM2_16GB, 16_384, 300, 40, 1530, 877, true, null, 0);

    /** How many instances a MIG-enabled GPU is cut into (the smallest profile, seven per GPU). */
    public static final int MIG_SLICES = 7;

    /** The SM clock of an idle GPU, in MHz. */
    public static final int IDLE_SM_CLOCK_MHZ = 210;

    public final String modelName;
    public final long memoryMib;
    public final int tdpWatts;
    public final int idleWatts;
    public final int maxSmClockMhz;
    public final int memClockMhz;
    public final boolean reportsMemoryTemperature;
    public final String migProfile;
    public final long migMemoryMib;

    GpuModel(String modelName, long memoryMib, int tdpWatts, int idleWatts, int maxSmClockMhz, int memClockMhz,
            boolean reportsMemoryTemperature, String migProfile, long migMemoryMib) {
        this.modelName = modelName;
        this.memoryMib = memoryMib;
        this.tdpWatts = tdpWatts;
        this.idleWatts = idleWatts;
        this.maxSmClockMhz = maxSmClockMhz;
        this.memClockMhz = memClockMhz;
        this.reportsMemoryTemperature = reportsMemoryTemperature;
        this.migProfile = migProfile;
        this.migMemoryMib = migMemoryMib;
    }

    public boolean supportsMig() {
        return migProfile != null;
    }
}
