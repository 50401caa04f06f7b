package dev.gpucloud.agent.nvml;

/** NVML cannot be used on this host: the library is missing or nvmlInit_v2 failed; the message says which. */
public final class NvmlUnavailableException extends Exception {

    public NvmlUnavailableException(String message) {
        super(message);
    }
}
