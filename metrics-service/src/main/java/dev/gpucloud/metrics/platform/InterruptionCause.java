package dev.gpucloud.metrics.platform;

import java.util.Locale;

/** Why a job that held GPUs went back to the queue: the reason text of its PENDING event, classified. */
public enum InterruptionCause {
    /** The cloud reclaimed spot capacity. */
    SPOT("spot"),
    /** A job of a higher priority class took the GPUs. */
    PREEMPTION("preemption"),
    /** The host, or a worker on it, was lost (heartbeat loss, crash, a worker that vanished). */
    HOST_LOST("host_lost"),
    /** Any other requeue. */
    OTHER("other");

    private final String label;

    InterruptionCause(String label) {
        this.label = label;
    }

    /** The value of the {@code cause} label. */
    public String label() {
        return label;
    }

    /** Classifies a requeue reason ("requeued: a worker was lost", "spot interruption on ..."). */
    public static InterruptionCause of(String reason) {
        String text = reason == null ? "" : reason.toLowerCase(Locale.ROOT);
        if (text.contains("spot") || text.contains("interruption")) {
            return SPOT;
        }
        if (text.contains("preempt")) {
            return PREEMPTION;
        }
        if (text.contains("lost") || text.contains("heartbeat") || text.contains("host")) {
            return HOST_LOST;
        }
        return OTHER;
    }
}
