package dev.gpucloud.scheduler.service.engine;

/**
 * A submission refused for what it asks in this cluster, as opposed to how it is written:
 * {@link Kind#QUOTA} (RESOURCE_EXHAUSTED), {@link Kind#UNSCHEDULABLE} (no host of the fleet could
 * ever run it: FAILED_PRECONDITION), {@link Kind#UNKNOWN_TENANT} (PERMISSION_DENIED) or
 * {@link Kind#CONFLICT} (a request id reused for a different spec: ALREADY_EXISTS), {@link Kind#DEPENDENCY} (it
 * runs after a job the tenant does not have: INVALID_ARGUMENT) or {@link Kind#NEVER_RUNS} (after one that already
 * ended otherwise than it asks: FAILED_PRECONDITION).
 */
public class AdmissionException extends RuntimeException {

    public enum Kind {
        QUOTA,
        UNSCHEDULABLE,
        UNKNOWN_TENANT,
        CONFLICT,
        /** A dependency that names no job or array of the tenant: INVALID_ARGUMENT. */
        DEPENDENCY,
        /** A dependency that already ended so the job could never run: FAILED_PRECONDITION. */
        NEVER_RUNS
    }

    private final Kind kind;

    public AdmissionException(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
