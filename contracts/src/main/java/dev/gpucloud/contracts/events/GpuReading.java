package dev.gpucloud.contracts.events;

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
        Require.atLeast(index, 0, "index");
        Require.text(uuid, "uuid");
        Require.text(model, "model");
        Require.between(gpuUtilPercent, 0, 100, "gpuUtilPercent");
        Require.atLeast(memoryUsedMib, 0, "memoryUsedMib");
        Require.atLeast(memoryFreeMib, 0, "memoryFreeMib");
        migInstances = Require.list(migInstances, "migInstances");
    }
}
