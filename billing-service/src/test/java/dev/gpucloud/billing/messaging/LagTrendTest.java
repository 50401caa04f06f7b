package dev.gpucloud.billing.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Not a @QuarkusTest: the rule is plain arithmetic on samples. */
class LagTrendTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static Instant at(long minutes) {
        return T0.plusSeconds(minutes * 60);
    }

    @Test
    void a_lag_that_never_shrinks_counts_as_stalled_from_its_first_sample() {
        LagTrend trend = new LagTrend();
        trend.sample(at(0), 100);
        trend.sample(at(5), 100);
        trend.sample(at(10), 140);
        assertThat(trend.notShrinkingFor(at(10))).contains(Duration.ofMinutes(10));
    }

    @Test
    void a_lag_that_shrinks_now_and_then_restarts_the_window() {
        LagTrend trend = new LagTrend();
        trend.sample(at(0), 100);
        trend.sample(at(5), 300);
        trend.sample(at(8), 90);
        trend.sample(at(10), 200);
        assertThat(trend.notShrinkingFor(at(10))).contains(Duration.ofMinutes(2));
    }

    @Test
    void no_lag_is_no_stall() {
        LagTrend trend = new LagTrend();
        trend.sample(at(0), 100);
        trend.sample(at(5), 0);
        assertThat(trend.notShrinkingFor(at(20))).isEmpty();
        assertThat(trend.lastLag()).isZero();
    }
}
