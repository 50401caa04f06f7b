package dev.gpucloud.contracts.events;

/** Queue priority; LOW jobs may be preempted (after a checkpoint) by higher ones. */
public enum PriorityClass {
    LOW,
    NORMAL,
    HIGH
}
