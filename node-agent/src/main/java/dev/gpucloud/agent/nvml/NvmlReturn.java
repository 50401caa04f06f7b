package dev.gpucloud.agent.nvml;

import java.util.Map;

/** The names of nvmlReturn_t codes, so a message says NVML_ERROR_GPU_IS_LOST rather than 15. */
public final class NvmlReturn {

    public static final int SUCCESS = 0;
    public static final int ERROR_UNINITIALIZED = 1;
    public static final int ERROR_INVALID_ARGUMENT = 2;
    public static final int ERROR_NOT_SUPPORTED = 3;
    public static final int ERROR_NO_PERMISSION = 4;
    public static final int ERROR_NOT_FOUND = 6;
    public static final int ERROR_DRIVER_NOT_LOADED = 9;
    public static final int ERROR_FUNCTION_NOT_FOUND = 13;
    public static final int ERROR_GPU_IS_LOST = 15;
    public static final int ERROR_INSUFFICIENT_RESOURCES = 23;
    public static final int ERROR_RESET_REQUIRED = 16;
    public static final int ERROR_ARGUMENT_VERSION_MISMATCH = 25;
    public static final int ERROR_GPU_NOT_FOUND = 28;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(0, "NVML_SUCCESS"),
            Map.entry(1, "NVML_ERROR_UNINITIALIZED"),
            Map.entry(2, "NVML_ERROR_INVALID_ARGUMENT"),
            Map.entry(3, "NVML_ERROR_NOT_SUPPORTED"),
            Map.entry(4, "NVML_ERROR_NO_PERMISSION"),
            Map.entry(5, "NVML_ERROR_ALREADY_INITIALIZED"),
            Map.entry(6, "NVML_ERROR_NOT_FOUND"),
            Map.entry(7, "NVML_ERROR_INSUFFICIENT_SIZE"),
            Map.entry(8, "NVML_ERROR_INSUFFICIENT_POWER"),
            Map.entry(9, "NVML_ERROR_DRIVER_NOT_LOADED"),
            Map.entry(10, "NVML_ERROR_TIMEOUT"),
            Map.entry(11, "NVML_ERROR_IRQ_ISSUE"),
            Map.entry(12, "NVML_ERROR_LIBRARY_NOT_FOUND"),
            Map.entry(13, "NVML_ERROR_FUNCTION_NOT_FOUND"),
            Map.entry(14, "NVML_ERROR_CORRUPTED_INFOROM"),
            Map.entry(15, "NVML_ERROR_GPU_IS_LOST"),
            Map.entry(16, "NVML_ERROR_RESET_REQUIRED"),
            Map.entry(17, "NVML_ERROR_OPERATING_SYSTEM"),
            Map.entry(18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
            Map.entry(19, "NVML_ERROR_IN_USE"),
            Map.entry(20, "NVML_ERROR_MEMORY"),
            Map.entry(21, "NVML_ERROR_NO_DATA"),
            Map.entry(22, "NVML_ERROR_VGPU_ECC_NOT_ENABLED"),
            Map.entry(23, "NVML_ERROR_INSUFFICIENT_RESOURCES"),
            Map.entry(24, "NVML_ERROR_FREQ_NOT_SUPPORTED"),
            Map.entry(25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"),
            Map.entry(26, "NVML_ERROR_DEPRECATED"),
            Map.entry(27, "NVML_ERROR_NOT_READY"),
            Map.entry(28, "NVML_ERROR_GPU_NOT_FOUND"),
            Map.entry(29, "NVML_ERROR_INVALID_STATE"),
            Map.entry(999, "NVML_ERROR_UNKNOWN"));

    private NvmlReturn() {
    }

    /** The code's name from nvml.h, or "NVML_RETURN_<code>" for one this table does not know. */
    public static String name(int code) {
        return NAMES.getOrDefault(code, "NVML_RETURN_" + code);
    }

    /** A GPU that answers this has fallen off the bus or needs a reset: it is out until it comes back. */
    public static boolean meansGpuGone(int code) {
        return code == ERROR_GPU_IS_LOST || code == ERROR_RESET_REQUIRED || code == ERROR_GPU_NOT_FOUND;
    }
}
