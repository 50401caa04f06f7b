package dev.gpucloud.agent.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class UsageMeterTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    /** A case: interval length, the times the meter is asked (seconds after start), where it ends, and the cuts expected. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("exact multiple of the interval", 10, List.of(10.0, 20.0), 30.0, List.of(0, 10, 20, 30)),
                Arguments.of("ends mid interval", 10, List.of(10.0), 25.0, List.of(0, 10, 20, 25)),
                Arguments.of("asked late cuts every whole interval", 10, List.of(35.0), 41.0, List.of(0, 10, 20, 30, 40, 41)),
                Arguments.of("asked early cuts nothing early", 10, List.of(3.0, 9.999), 12.0, List.of(0, 10, 12)),
                Arguments.of("shorter than one interval", 10, List.of(), 4.5, List.of(0, 4.5)),
                Arguments.of("ends on the start: no usage", 10, List.of(), 0.0, List.of()),
                Arguments.of("ends right after a cut", 10, List.of(20.0), 20.0, List.of(0, 10, 20)),
                Arguments.of("asked repeatedly at the same time", 1, List.of(2.0, 2.0, 2.0), 2.5, List.of(0, 1, 2, 2.5)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void cutsContiguousIntervalsFromStartToEnd(String name, int intervalSeconds, List<Double> askedAt, double end,
            List<Number> expectedCuts) {
        UsageMeter meter = new UsageMeter(T0, Duration.ofSeconds(intervalSeconds));
        List<Interval> intervals = new ArrayList<>();
        for (double at : askedAt) {
            intervals.addAll(meter.due(at(at)));
        }
        intervals.addAll(meter.close(at(end)));
        intervals.addAll(meter.due(at(end + 100)));

        List<Instant> expected = expectedCuts.stream().map(n -> at(n.doubleValue())).toList();
        List<Instant> cuts = new ArrayList<>();
        for (Interval interval : intervals) {
            if (cuts.isEmpty()) {
                cuts.add(interval.from());
            }
            assertThat(interval.from()).isEqualTo(cuts.get(cuts.size() - 1));
            cuts.add(interval.to());
        }
        assertThat(cuts).isEqualTo(expected);
    }

    private static Instant at(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }
}
