package dev.gpucloud.metrics.gpu;

import java.time.Duration;

/**
 * Which telemetry samples the fleet believes: one dated more than {@code maxAhead} after it arrived (a broken
 * clock, which would otherwise freeze the host's series: every later real sample would look older) or more
 * than {@code maxAge} before (replayed or stuck) is dropped and counted; with {@code requireInventory}, so is a
 * sample of a host no inventory record describes (it would create series for a host that does not exist).
 */
public record SampleRules(Duration maxAhead, Duration maxAge, boolean requireInventory) {

    /** Believes every sample (tests of other rules, benchmarks). */
    public static final SampleRules TRUSTING = new SampleRules(Duration.ofDays(365_000), Duration.ofDays(365_000),
            false);

    public SampleRules {
        if (maxAhead.isNegative() || maxAge.isNegative()) {
            throw new IllegalArgumentException("sample rules need durations >= 0: " + maxAhead + ", " + maxAge);
        }
    }
}
