package dev.gpucloud.agent.nvml;

/** An NVML call that did not return NVML_SUCCESS: which call, the code, its name and NVML's own words. */
public final class NvmlException extends RuntimeException {

    private final String call;
    private final int code;

    public NvmlException(String call, int code, String description) {
        super(call + " failed: " + NvmlReturn.name(code) + " (" + code + ")"
                + (description == null || description.isBlank() ? "" : ": " + description));
        this.call = call;
        this.code = code;
    }

    /** The NVML function that failed. */
    public String call() {
        return call;
    }

    /** The nvmlReturn_t it returned. */
    public int code() {
        return code;
    }

    /** The device does not have this reading (NVML_ERROR_NOT_SUPPORTED) or the driver lacks the symbol. */
    public boolean notAvailable() {
        return code == NvmlReturn.ERROR_NOT_SUPPORTED || code == NvmlReturn.ERROR_FUNCTION_NOT_FOUND;
    }

    /** The GPU is gone (fell off the bus, needs a reset). */
    public boolean gpuGone() {
        return NvmlReturn.meansGpuGone(code);
    }
}
