package dev.gpucloud.metrics.gpu;

/** Why telemetry, or part of it, did not become series. Each is counted, so nothing is dropped silently. */
public enum DropReason {
    /** A reading outside its field's physical range (negative, infinite, absurd): that one series is skipped. */
    IMPLAUSIBLE_VALUE("implausible_value"),
    /** A GPU that the host's inventory does not list: its readings are skipped. */
    UNKNOWN_GPU("unknown_gpu"),
    /** A sample that lists more GPUs than one host may have: the whole sample is dead-lettered. */
    GPUS_PER_HOST("gpus_per_host"),
    /** A sample that would take the fleet past the series cap (max-gpus): the whole sample is dead-lettered. */
    SERIES_CAP("series_cap"),
    /** A sample not newer than the host's latest, or taken before the host left: ignored. */
    STALE_SAMPLE("stale_sample"),
    /** A sample dated further ahead of its arrival than max-sample-ahead (a broken clock): ignored. */
    FUTURE_SAMPLE("future_sample"),
    /** A sample dated further before its arrival than max-sample-age (replayed, or stuck in a queue): ignored. */
    OLD_SAMPLE("old_sample"),
    /** A sample of a host that no inventory record describes: ignored, so it creates no series. */
    UNKNOWN_HOST("unknown_host");

    private final String label;

    DropReason(String label) {
        this.label = label;
    }

    /** The value of the {@code reason} label on the drop counter. */
    public String label() {
        return label;
    }
}
