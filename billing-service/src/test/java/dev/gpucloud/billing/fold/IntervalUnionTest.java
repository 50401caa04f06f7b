package dev.gpucloud.billing.fold;

import static dev.gpucloud.billing.fold.Usage.iv;
import static dev.gpucloud.billing.fold.Usage.permutations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class IntervalUnionTest {

    static Stream<Arguments> reports() {
        return Stream.of(
                Arguments.of("a single report counts once",
                        List.of(iv(0, 40)), List.of(iv(0, 40)), 40),
                Arguments.of("a duplicate report counts once",
                        List.of(iv(0, 40), iv(0, 40)), List.of(iv(0, 40)), 40),
                Arguments.of("an overlapping report adds only its new part",
                        List.of(iv(0, 40), iv(30, 70)), List.of(iv(0, 70)), 70),
                Arguments.of("reports out of order give the same union",
                        List.of(iv(70, 100), iv(0, 40), iv(40, 70)), List.of(iv(0, 100)), 100),
                Arguments.of("a gap between reports is not billed",
                        List.of(iv(0, 30), iv(90, 100)), List.of(iv(0, 30), iv(90, 100)), 40),
                Arguments.of("a report inside another adds nothing",
                        List.of(iv(0, 100), iv(10, 20)), List.of(iv(0, 100)), 100),
                Arguments.of("touching reports merge into one interval",
                        List.of(iv(10, 20), iv(0, 10)), List.of(iv(0, 20)), 20),
                Arguments.of("a late report can fill a gap",
                        List.of(iv(0, 30), iv(60, 90), iv(20, 70)), List.of(iv(0, 90)), 90));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reports")
    void union_of_reports(String behaviour, List<Interval> reported, List<Interval> expected, long seconds) {
        IntervalUnion union = IntervalUnion.of(reported);

        assertThat(union.intervals()).isEqualTo(expected);
        assertThat(union.total()).isEqualTo(Duration.ofSeconds(seconds));
    }

    @ParameterizedTest(name = "{0}: in any order, one at a time")
    @MethodSource("reports")
    void the_order_of_reports_never_matters(String behaviour, List<Interval> reported, List<Interval> expected,
            long seconds) {
        for (List<Interval> order : permutations(reported)) {
            IntervalUnion union = IntervalUnion.empty();
            for (Interval interval : order) {
                union = union.with(interval);
            }
            assertThat(union.intervals()).as("order %s", order).isEqualTo(expected);
        }
    }

    @Test
    void clipping_to_a_window_keeps_only_the_time_inside_it() {
        IntervalUnion union = IntervalUnion.of(iv(0, 30), iv(60, 90));

        assertThat(union.within(iv(20, 70)).intervals()).containsExactly(iv(20, 30), iv(60, 70));
        assertThat(union.before(Usage.at(65)).total()).isEqualTo(Duration.ofSeconds(35));
        assertThat(union.before(Usage.at(0)).isEmpty()).isTrue();
    }

    @Test
    void an_empty_or_backwards_interval_is_refused() {
        assertThatThrownBy(() -> iv(10, 10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must end after it starts");
        assertThatThrownBy(() -> iv(10, 5)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void storing_at_microsecond_precision_never_shrinks_an_interval() {
        Interval precise = Interval.of(Usage.T0.plusNanos(1_500), Usage.T0.plusNanos(2_500));

        Interval stored = precise.toMicros();

        assertThat(stored).isEqualTo(Interval.of(Usage.T0.plusNanos(1_000), Usage.T0.plusNanos(3_000)));
        assertThat(iv(0, 1).toMicros()).isEqualTo(iv(0, 1));
    }
}
