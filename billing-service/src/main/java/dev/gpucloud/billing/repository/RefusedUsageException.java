package dev.gpucloud.billing.repository;

/** A well-formed usage event that billing will not apply (it contradicts what is known); retrying cannot help. */
public class RefusedUsageException extends RuntimeException {
    public RefusedUsageException(String message) {
        super(message);
    }
}
