package dev.gpucloud.scheduler.sim.trace;

/**
 * What a loader does with a malformed row. A file that cannot be read at all (missing, empty, a
 * required column absent from the header) always fails, whatever the mode.
 */
public enum ErrorMode {
    /** Stop at the first malformed row with a {@link TraceFormatException}: the default, for figures one publishes. */
    STRICT,
    /** Skip malformed rows, count them and keep the first {@link Loaded#MAX_PROBLEMS} messages. */
    LENIENT
}
