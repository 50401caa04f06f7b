package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.util.List;

/**
 * One GPU's readings in a telemetry sample. Units: percent 0..100 for utilizations, MiB for
 * memory, watts for power, millijoules for energy since driver load, degrees Celsius, MHz for
 * clocks; activity ratios 0..1. A reading the backend cannot take is null.
 */
public record GpuReading(
        int index,
        String uuid,
        String model,
        String pciBusId,
        double gpuUtilPercent,
        Double memCopyUtilPercent,
        long memoryUsedMib,
        long memoryFreeMib,
        Double powerWatts,
        Long energyMillijoules,
        Integer temperatureC,
        Integer memoryTemperatureC,
        Integer smClockMhz,
        Integer memClockMhz,
        Long eccCorrected,
        Long eccUncorrected,
        Integer lastXid,
        Long pcieReplays,
        Double grEngineActive,
        Double tensorActive,
        Double dramActive,
        List<MigReading> migInstances) {

    public GpuReading {
        Check.number(index, Limits.GPU_INDEX, "index");
        Check.text(uuid, Limits.LABEL_TEXT, "uuid");
        Check.text(model, Limits.GPU_MODEL, "model");
        Check.optionalText(pciBusId, Limits.LABEL_TEXT, "pciBusId");
        Require.between(gpuUtilPercent, 0, 100, "gpuUtilPercent");
        Require.atLeast(memoryUsedMib, 0, "memoryUsedMib");
        Require.atLeast(memoryFreeMib, 0, "memoryFreeMib");
        migInstances = Check.size(Require.list(migInstances, "migInstances"), Limits.SHORT_LIST, "migInstances");
    }
}
