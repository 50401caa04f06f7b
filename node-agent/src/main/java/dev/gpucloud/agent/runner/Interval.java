package dev.gpucloud.agent.runner;

import java.time.Duration;
import java.time.Instant;

/** A half-open span of time {@code [from, to)}, never empty. */
public record Interval(Instant from, Instant to) {
    public Interval {
        if (!to.isAfter(from)) {
            throw new IllegalArgumentException("interval must not be empty: [" + from + ", " + to + ")");
        }
    }

    public Duration length() {
        return Duration.between(from, to);
    }
}
