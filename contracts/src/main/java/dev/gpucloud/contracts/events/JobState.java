package dev.gpucloud.contracts.events;

/**
 * A job's lifecycle; SUCCEEDED, FAILED and CANCELLED are final. WAITING_FOR_DEPENDENCIES comes before PENDING
 * for a job that runs after others (it is last here so that the others keep their ordinals).
 */
public enum JobState {
    PENDING,
    SCHEDULED,
    RUNNING,
    CHECKPOINTING,
    SUCCEEDED,
    FAILED,
    CANCELLED,
    WAITING_FOR_DEPENDENCIES;

    public boolean isFinal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
