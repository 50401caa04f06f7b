package dev.gpucloud.agent.runner;

/** A MIG instance could not be created or destroyed; the message says why (NVML's code and words). */
public final class MigRefusedException extends RuntimeException {

    public MigRefusedException(String message) {
        super(message);
    }

    public MigRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
