package dev.gpucloud.contracts.events;

/** What the scheduler asks a host's agent to do with one allocation. */
public enum NodeCommandType {
    START,
    CHECKPOINT,
    STOP
}
