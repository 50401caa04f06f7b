package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.GpuReading;
import java.util.function.ToDoubleFunction;

/**
 * A per-GPU field that is exported under dcgm-exporter's exact name, unit and help text, so that
 * dashboards and alerts written for dcgm-exporter work unchanged. Adding a field is one constant.
 */
public enum GpuField {
    GPU_UTIL("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", GpuReading::gpuUtilPercent),
    MEM_COPY_UTIL("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).",
            r -> orAbsent(r.memCopyUtilPercent())),
    FB_FREE("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", GpuReading::memoryFreeMib),
    FB_USED("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", GpuReading::memoryUsedMib),
    POWER_USAGE("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", r -> orAbsent(r.powerWatts())),
    TOTAL_ENERGY_CONSUMPTION("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "Total energy consumption since boot (in mJ).", r -> orAbsent(r.energyMillijoules())),
    GPU_TEMP("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", r -> orAbsent(r.temperatureC())),
    SM_CLOCK("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", r -> orAbsent(r.smClockMhz())),
    MEM_CLOCK("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", r -> orAbsent(r.memClockMhz()));

    /** The value a field has when the backend could not take the reading: such a field has no series. */
    public static final double ABSENT = Double.NaN;

    private static final GpuField[] ALL = values();

    private final String metricName;
    private final String help;
    private final ToDoubleFunction<GpuReading> reader;

    GpuField(String metricName, String help, ToDoubleFunction<GpuReading> reader) {
        this.metricName = metricName;
        this.help = help;
        this.reader = reader;
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
