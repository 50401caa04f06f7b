package dev.gpucloud.contracts.events;

/** What happened to one allocation on its host. */
public enum AllocationEventType {
    STARTED,
    CHECKPOINT_SAVED,
    EXITED,
    LOST
}
