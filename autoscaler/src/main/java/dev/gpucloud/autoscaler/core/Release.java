package dev.gpucloud.autoscaler.core;

import java.util.Objects;

/** A host to let go: terminated now ({@link Action#RELEASE}) or first emptied of its jobs ({@link Action#DRAIN}). */
public record Release(String hostId, String pool, Action action, Reason reason, String message) {

    public Release {
        Objects.requireNonNull(hostId, "hostId");
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
    }

    /** Terminate, or stop placing and checkpoint its jobs away first. */
    public enum Action {
        RELEASE,
        DRAIN
    }

    /** Why, as a code an adapter can count. */
    public enum Reason {
        /** No allocations for the idle timeout. */
        IDLE,
        /** Below the utilization threshold for the idle timeout, with checkpointable jobs that fit elsewhere. */
        UNDERUSED,
        /** Draining and now empty. */
        DRAINED,
        /** Launched longer ago than the launch timeout and never registered. */
        NEVER_REGISTERED
    }
}
