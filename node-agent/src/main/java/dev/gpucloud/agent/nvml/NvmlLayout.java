package dev.gpucloud.agent.nvml;

/**
 * NVML's constants and struct layouts as nvml.h defines them (x86_64 and aarch64 alike: natural
 * alignment, 4-byte enums). A versioned struct carries sizeof(struct) | (version << 24) in its
 * first field, as NVML_STRUCT_VERSION builds it.
 */
public final class NvmlLayout {

    /** NVML_DEVICE_NAME_V2_BUFFER_SIZE. */
    public static final int DEVICE_NAME_BUFFER = 96;
    /** NVML_DEVICE_UUID_V2_BUFFER_SIZE. */
    public static final int DEVICE_UUID_BUFFER = 96;
    /** NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE. */
    public static final int DRIVER_VERSION_BUFFER = 80;
    /** NVML_NVLINK_MAX_LINKS (18 since Hopper). */
    public static final int NVLINK_MAX_LINKS = 18;

    /** nvmlPciInfo_t: char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]. */
    public static final int PCI_INFO_SIZE = 68;
    public static final int PCI_BUS_ID_OFFSET = 36;
    public static final int PCI_BUS_ID_LENGTH = 32;

    /** nvmlMemory_v2_t: unsigned version; (4 bytes padding) unsigned long long total, reserved, free, used. */
    public static final int MEMORY_V2_SIZE = 40;
    public static final int MEMORY_V2_VERSION = MEMORY_V2_SIZE | (2 << 24);
    public static final int MEMORY_V2_TOTAL = 8;
    public static final int MEMORY_V2_RESERVED = 16;
    public static final int MEMORY_V2_FREE = 24;
    public static final int MEMORY_V2_USED = 32;

    /** nvmlUtilization_t: unsigned gpu, memory. */
    public static final int UTILIZATION_SIZE = 8;

    /** nvmlTemperature_v1_t: unsigned version; nvmlTemperatureSensors_t sensorType; int temperature. */
    public static final int TEMPERATURE_V1_SIZE = 12;
    public static final int TEMPERATURE_V1_VERSION = TEMPERATURE_V1_SIZE | (1 << 24);

    /** nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU. */
    public static final int TEMPERATURE_GPU = 0;
    /** nvmlClockType_t NVML_CLOCK_SM and NVML_CLOCK_MEM. */
    public static final int CLOCK_SM = 1;
    public static final int CLOCK_MEM = 2;
    /** nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_CORRECTED and _UNCORRECTED. */
    public static final int ECC_CORRECTED = 0;
    public static final int ECC_UNCORRECTED = 1;
    /** nvmlEccCounterType_t NVML_VOLATILE_ECC: counts since the last driver load. */
    public static final int ECC_VOLATILE = 0;
    /** NVML_DEVICE_MIG_ENABLE and nvmlEnableState_t NVML_FEATURE_ENABLED. */
    public static final int ENABLED = 1;

    /**
     * nvmlGpuInstanceProfileInfo_t: unsigned id, isP2pSupported, sliceCount, instanceCount,
     * multiprocessorCount, copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
     * (no padding) unsigned long long memorySizeMB.
     */
    public static final int GI_PROFILE_INFO_SIZE = 48;
    public static final int GI_PROFILE_INFO_MEMORY_MB = 40;
    /** NVML_GPU_INSTANCE_PROFILE_1_SLICE .. _7_SLICE, _1_SLICE_REV1 (+me) and _1_SLICE_REV2 (double memory). */
    public static final int GI_PROFILE_1_SLICE = 0;
    public static final int GI_PROFILE_2_SLICE = 1;
    public static final int GI_PROFILE_3_SLICE = 2;
    public static final int GI_PROFILE_4_SLICE = 3;
    public static final int GI_PROFILE_7_SLICE = 4;
    public static final int GI_PROFILE_1_SLICE_REV1 = 7;
    public static final int GI_PROFILE_2_SLICE_REV1 = 8;
    public static final int GI_PROFILE_1_SLICE_REV2 = 9;
    /** nvmlGpuInstancePlacement_t: unsigned start, size. */
    public static final int PLACEMENT_SIZE = 8;
    /** nvmlGpuInstanceInfo_t: nvmlDevice_t device; unsigned id, profileId; nvmlGpuInstancePlacement_t placement. */
    public static final int GI_INFO_SIZE = 24;
    public static final int GI_INFO_ID = 8;
    public static final int GI_INFO_PLACEMENT_START = 16;
    public static final int GI_INFO_PLACEMENT_SIZE = 20;
    /** nvmlComputeInstanceProfileInfo_t: nine unsigned ints, the profile id first. */
    public static final int CI_PROFILE_INFO_SIZE = 36;
    /** NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE .. _4_SLICE (0..3), _7_SLICE (4). */
    public static final int CI_PROFILE_7_SLICE = 4;
    /** NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED. */
    public static final int CI_ENGINE_PROFILE_SHARED = 0;

    /** nvmlGpmSupport_t: unsigned version (NVML_GPM_SUPPORT_VERSION 1), isSupportedDevice. */
    public static final int GPM_SUPPORT_SIZE = 8;
    public static final int GPM_SUPPORT_VERSION = 1;
    /**
     * nvmlGpmMetricsGet_t: unsigned version (NVML_GPM_METRICS_GET_VERSION 1), numMetrics;
     * nvmlGpmSample_t sample1, sample2; nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX]. The array's
     * length differs between headers (98, 210, 333); NVML reads only numMetrics entries, and the
     * buffer is sized for the largest.
     */
    public static final int GPM_METRICS_GET_VERSION = 1;
    public static final int GPM_METRICS_GET_SAMPLE1 = 8;
    public static final int GPM_METRICS_GET_SAMPLE2 = 16;
    public static final int GPM_METRICS_GET_METRICS = 24;
    public static final int GPM_METRIC_MAX = 333;
    /** nvmlGpmMetric_t: unsigned metricId; nvmlReturn_t nvmlReturn; double value; three char* (names, unit). */
    public static final int GPM_METRIC_SIZE = 40;
    public static final int GPM_METRIC_RETURN = 4;
    public static final int GPM_METRIC_VALUE = 8;
    public static final int GPM_METRICS_GET_SIZE = GPM_METRICS_GET_METRICS + GPM_METRIC_MAX * GPM_METRIC_SIZE;
    /** NVML_GPM_METRIC_GRAPHICS_UTIL: percent of time the graphics engine was active (DCGM's GR_ENGINE_ACTIVE). */
    public static final int GPM_METRIC_GRAPHICS_UTIL = 1;

    private NvmlLayout() {
    }
}
