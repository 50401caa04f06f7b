package dev.gpucloud.billing.messaging;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Whether consumption has stalled, from samples of its lag: stalled once the lag has stayed above zero for
 * a window without ever dropping below where it stood at the window's start. A lag that shrinks now and then
 * (a busy consumer that keeps up) or reaches zero restarts the window. Not thread-safe: one sampler.
 */
final class LagTrend {

    private Instant since;
    private long base;
    private long last = -1;

    /** Records the lag measured at {@code at}. */
    void sample(Instant at, long lag) {
        last = lag;
        if (lag <= 0) {
            since = null;
        } else if (since == null || lag < base) {
            since = at;
            base = lag;
        }
    }

    /** How long the lag has been above zero without shrinking, if it is. */
    Optional<Duration> notShrinkingFor(Instant now) {
        return since == null ? Optional.empty() : Optional.of(Duration.between(since, now));
    }

    /** The latest lag measured; -1 before the first sample. */
    long lastLag() {
        return last;
    }
}
