package dev.gpucloud.agent.nvml;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The NVML symbols the agent binds, with nvml.h's signatures: every call returns an nvmlReturn_t,
 * a device is an opaque nvmlDevice_t pointer, and structs are passed as buffers laid out by
 * {@link NvmlLayout}. JNA resolves each symbol on first call, so one the driver lacks fails
 * there with an UnsatisfiedLinkError, which {@link Nvml} turns into "not available".
 */
public interface NvmlLibrary extends Library {

    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlSystemGetDriverVersion(byte[] version, int length);

    int nvmlDeviceGetCount_v2(IntByReference count);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetUUID(Pointer device, byte[] uuid, int length);

    int nvmlDeviceGetPciInfo_v3(Pointer device, Pointer pciInfo);

    int nvmlDeviceGetMemoryInfo_v2(Pointer device, Pointer memory);

    int nvmlDeviceGetUtilizationRates(Pointer device, Pointer utilization);

    int nvmlDeviceGetTemperature(Pointer device, int sensorType, IntByReference temperature);

    /** Optional: drivers from R545 on. */
    int nvmlDeviceGetTemperatureV(Pointer device, Pointer temperature);

    int nvmlDeviceGetPowerUsage(Pointer device, IntByReference milliwatts);

    /** Optional: Volta and later. */
    int nvmlDeviceGetTotalEnergyConsumption(Pointer device, LongByReference millijoules);

    int nvmlDeviceGetClockInfo(Pointer device, int clockType, IntByReference mhz);

    int nvmlDeviceGetTotalEccErrors(Pointer device, int errorType, int counterType, LongByReference count);

    int nvmlDeviceGetMigMode(Pointer device, IntByReference currentMode, IntByReference pendingMode);

    int nvmlDeviceGetMaxMigDeviceCount(Pointer device, IntByReference count);

    int nvmlDeviceGetMigDeviceHandleByIndex(Pointer device, int index, PointerByReference migDevice);

    int nvmlDeviceGetGpuInstanceId(Pointer device, IntByReference id);

    int nvmlDeviceGetNvLinkState(Pointer device, int link, IntByReference isActive);

    int nvmlDeviceGetNvLinkRemotePciInfo_v2(Pointer device, int link, Pointer pciInfo);

    int nvmlEventSetCreate(PointerByReference set);

    int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

    int nvmlEventSetWait_v2(Pointer set, Pointer data, int timeoutMs);

    int nvmlEventSetFree(Pointer set);

    // MIG: GPU instances, compute instances and their placement (drivers from R450 on).

    int nvmlDeviceGetGpuInstanceProfileInfo(Pointer device, int profile, Pointer info);

    int nvmlDeviceCreateGpuInstanceWithPlacement(Pointer device, int profileId, Pointer placement,
            PointerByReference gpuInstance);

    int nvmlDeviceGetGpuInstanceById(Pointer device, int id, PointerByReference gpuInstance);

    int nvmlGpuInstanceGetInfo(Pointer gpuInstance, Pointer info);

    int nvmlGpuInstanceGetComputeInstanceProfileInfo(Pointer gpuInstance, int profile, int engProfile, Pointer info);

    int nvmlGpuInstanceCreateComputeInstance(Pointer gpuInstance, int profileId, PointerByReference computeInstance);

    int nvmlGpuInstanceGetComputeInstanceById(Pointer gpuInstance, int id, PointerByReference computeInstance);

    int nvmlDeviceGetComputeInstanceId(Pointer migDevice, IntByReference id);

    int nvmlComputeInstanceDestroy(Pointer computeInstance);

    int nvmlGpuInstanceDestroy(Pointer gpuInstance);

    // GPM: GPU performance monitoring (Hopper and later, drivers from R520 on).

    int nvmlGpmQueryDeviceSupport(Pointer device, Pointer support);

    int nvmlGpmSampleAlloc(PointerByReference sample);

    int nvmlGpmSampleFree(Pointer sample);

    int nvmlGpmMigSampleGet(Pointer device, int gpuInstanceId, Pointer sample);

    int nvmlGpmMetricsGet(Pointer metricsGet);
}
