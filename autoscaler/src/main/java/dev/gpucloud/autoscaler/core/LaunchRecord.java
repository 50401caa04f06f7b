package dev.gpucloud.autoscaler.core;

/** {@code hosts} hosts asked for in {@code pool} at {@code atMillis}: the history the launch rate is counted on. */
public record LaunchRecord(String pool, long atMillis, int hosts) {

    public LaunchRecord {
        if (pool == null || pool.isBlank()) {
            throw new IllegalArgumentException("pool of a launch record is missing");
        }
        if (hosts < 0) {
            throw new IllegalArgumentException("hosts of a launch record must be >= 0, got " + hosts);
        }
    }
}
