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

    private NvmlLayout() {
    }
}
