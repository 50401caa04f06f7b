package dev.gpucloud.contracts.events;

/** A job's lifecycle; SUCCEEDED, FAILED and CANCELLED are final. */
public enum JobState {
    PENDING,
    SCHEDULED,
    RUNNING,
    CHECKPOINTING,
    SUCCEEDED,
    FAILED,
    CANCELLED;

    public boolean isFinal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
