package dev.gpucloud.contracts.events;

/** What the scheduler asks a host's agent to do with one allocation. */
public enum NodeCommandType {
    START,
    CHECKPOINT,
    STOP,
    /**
     * Say again how the allocation stands: the agent answers with its last lifecycle event for it
     * (STARTED while it runs, EXITED or LOST once it ended) or LOST if it never ran it. Changes nothing
     * on the host; the scheduler asks when its reports and events disagree.
     */
    STATUS
}
