package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.MigReading;
import java.util.function.ToDoubleFunction;

/**
 * A per-GPU field that is exported under dcgm-exporter's exact name, unit and help text, so that
 * dashboards and alerts written for dcgm-exporter work unchanged. Adding a field is one constant.
 */
public enum GpuField {
    // Ranges: physical bounds, past which a reading is broken (16 TiB of framebuffer, a 5 kW GPU).
    GPU_UTIL("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", 0, 100, GpuReading::gpuUtilPercent),
    MEM_COPY_UTIL("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", 0, 100,
            r -> orAbsent(r.memCopyUtilPercent())),
    FB_FREE("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", 0, 16_777_216, GpuReading::memoryFreeMib),
    FB_USED("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", 0, 16_777_216, GpuReading::memoryUsedMib,
            MigReading::memoryUsedMib),
    POWER_USAGE("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", 0, 5_000, r -> orAbsent(r.powerWatts())),
    TOTAL_ENERGY_CONSUMPTION("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "Total energy consumption since boot (in mJ).", 0, 9.0e18, r -> orAbsent(r.energyMillijoules())),
    GPU_TEMP("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", 0, 150, r -> orAbsent(r.temperatureC())),
    MEMORY_TEMP("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", 0, 150,
            r -> orAbsent(r.memoryTemperatureC())),
    SM_CLOCK("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", 0, 10_000, r -> orAbsent(r.smClockMhz())),
    MEM_CLOCK("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", 0, 20_000, r -> orAbsent(r.memClockMhz())),
    XID_ERRORS("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", 0, 65_535,
            r -> orAbsent(r.lastXid())),
    PCIE_REPLAY_COUNTER("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", 0, 9.0e18,
            r -> orAbsent(r.pcieReplays())),
    PROF_GR_ENGINE_ACTIVE("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", 0, 1,
            r -> orAbsent(r.grEngineActive()), m -> orAbsent(m.grEngineActive())),
    PROF_PIPE_TENSOR_ACTIVE("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.",
            0, 1, r -> orAbsent(r.tensorActive())),
    PROF_DRAM_ACTIVE("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.",
            0, 1, r -> orAbsent(r.dramActive()));


    /** The value a field has when the backend could not take the reading: such a field has no series. */
    public static final double ABSENT = Double.NaN;

    private static final GpuField[] ALL = values();

    private final String metricName;
    private final String help;
    private final double min;
    private final double max;
    private final ToDoubleFunction<GpuReading> reader;
    private final ToDoubleFunction<MigReading> migReader;

    GpuField(String metricName, String help, double min, double max, ToDoubleFunction<GpuReading> reader) {
        this(metricName, help, min, max, reader, m -> ABSENT);
    }

    GpuField(String metricName, String help, double min, double max, ToDoubleFunction<GpuReading> reader,
            ToDoubleFunction<MigReading> migReader) {
        this.metricName = metricName;
        this.help = help;
        this.min = min;
        this.max = max;
        this.reader = reader;
        this.migReader = migReader;
    }

    /**
     * Whether a value read for this field can be true: finite and within the field's physical range
     * (no negative temperature or memory, no 10 kW GPU). An implausible value gets no series.
     */
    public boolean isPlausible(double value) {
        return value >= min && value <= max;
    }

    /** The series name, exactly as dcgm-exporter writes it. */
    public String metricName() {
        return metricName;
    }

    /** dcgm-exporter's help text, which also names the unit. */
    public String help() {
        return help;
    }

    /** This field's value in a reading, or {@link #ABSENT} (NaN) when the reading lacks it. */
    public double read(GpuReading reading) {
        return reader.applyAsDouble(reading);
    }

    /**
     * This field's value in a MIG instance's reading, or {@link #ABSENT}: a MIG instance has only the
     * framebuffer it uses and its graphics-engine activity, as in dcgm-exporter.
     */
    public double read(MigReading reading) {
        return migReader.applyAsDouble(reading);
    }

    /** Every field, as a shared array that callers must not modify (no copy per call on the hot path). */
    static GpuField[] all() {
        return ALL;
    }

    /** True when a value read from a reading means "no reading". */
    public static boolean isAbsent(double value) {
        return Double.isNaN(value);
    }

    private static double orAbsent(Number value) {
        return value == null ? ABSENT : value.doubleValue();
    }
}
