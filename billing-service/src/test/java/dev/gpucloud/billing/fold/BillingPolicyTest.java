package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.JUNE;
import static dev.gpucloud.billing.fold.Usage.MAY;
import static dev.gpucloud.billing.fold.Usage.iv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.YearMonth;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BillingPolicyTest {

    static Stream<Arguments> usage() {
        return Stream.of(
                Arguments.of("no usage bills nothing", 60, Duration.ZERO, 0),
                Arguments.of("short usage bills the minimum", 60, Duration.ofSeconds(5), 60),
                Arguments.of("usage of exactly the minimum bills the minimum", 60, Duration.ofSeconds(60), 60),
                Arguments.of("whole seconds above the minimum bill as they are", 60, Duration.ofSeconds(61), 61),
                Arguments.of("a fraction of a second rounds up", 60, Duration.ofMillis(61_200), 62),
                Arguments.of("one nanosecond over rounds up", 60, Duration.ofSeconds(90).plusNanos(1), 91),
                Arguments.of("a zero minimum bills the rounded usage", 0, Duration.ofMillis(500), 1),
                Arguments.of("a configured minimum applies", 300, Duration.ofSeconds(120), 300));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("usage")
    void billed_seconds(String behaviour, long minimum, Duration usage, long billed) {
        assertThat(new BillingPolicy(minimum).billedSeconds(usage)).isEqualTo(billed);
    }

    static Stream<Arguments> months() {
        return Stream.of(
                Arguments.of("an interval spanning a month boundary is split at it",
                        union(iv("2025-05-31T23:58:00Z", "2025-06-01T00:03:00Z")), 120, 180),
                Arguments.of("the minimum falls in the month the allocation started",
                        union(iv("2025-05-31T23:59:30Z", "2025-06-01T00:00:10Z")), 60, 0),
                Arguments.of("usage after the minimum is used up bills in its own month",
                        union(iv("2025-05-31T23:59:30Z", "2025-06-01T00:01:10Z")), 60, 40),
                Arguments.of("a month without usage bills nothing",
                        union(iv("2025-06-02T00:00:00Z", "2025-06-02T01:00:00Z")), 0, 3600),
                Arguments.of("rounding up happens once, where the running total crosses a second",
                        union(iv("2025-05-31T23:58:59.500Z", "2025-06-01T00:00:00.700Z")), 61, 1),
                Arguments.of("a gap across the boundary bills each side",
                        union(iv("2025-05-31T23:00:00Z", "2025-05-31T23:10:00Z"),
                                iv("2025-06-01T01:00:00Z", "2025-06-01T01:00:30Z")), 600, 30));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("months")
    void billed_seconds_per_month(String behaviour, IntervalUnion usage, long may, long june) {
        BillingPolicy policy = BillingPolicy.awsPerSecond();

        assertThat(policy.billedSecondsIn(usage, MAY)).as("May").isEqualTo(may);
        assertThat(policy.billedSecondsIn(usage, JUNE)).as("June").isEqualTo(june);
    }

    @ParameterizedTest(name = "{0}: the months add up to the allocation's total")
    @MethodSource("months")
    void months_add_up_to_the_whole(String behaviour, IntervalUnion usage, long may, long june) {
        BillingPolicy policy = BillingPolicy.awsPerSecond();
        long sum = 0;
        for (YearMonth m = YearMonth.of(2025, 1); m.isBefore(YearMonth.of(2026, 1)); m = m.plusMonths(1)) {
            sum += policy.billedSecondsIn(usage, m);
        }
        assertThat(sum).isEqualTo(policy.billedSeconds(usage.total()));
    }

    @Test
    void a_negative_minimum_is_refused() {
        assertThatThrownBy(() -> new BillingPolicy(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minimum billable seconds");
    }

    /** The minimum falls on a job's first attempt; a rerun that crosses a month end pays its seconds in each. */
    @Test
    void a_rerun_pays_its_seconds_without_a_second_minimum_in_every_month() {
        BillingPolicy policy = BillingPolicy.awsPerSecond();
        MeteredAllocation first = Usage.mkA100("job-1-a1-r0", "job-1", iv("2025-05-31T23:59:50Z", "2025-06-01T00:00:00Z"));
        MeteredAllocation rerun = Usage.mkA100("job-1-a2-r0", "job-1", iv("2025-05-31T23:59:50Z", "2025-06-01T00:00:20Z"));

        assertThat(policy.billedSecondsIn(first, MAY)).isEqualTo(60);
        assertThat(policy.billedSecondsIn(first, JUNE)).isZero();
        assertThat(policy.billedSecondsIn(rerun, MAY)).isEqualTo(10);
        assertThat(policy.billedSecondsIn(rerun, JUNE)).isEqualTo(20);
    }

    private static IntervalUnion union(Interval... intervals) {
        return IntervalUnion.of(intervals);
    }
}
