package dev.gpucloud.billing.fold;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/** A half-open span of time {@code [from, to)}; it is never empty. */
public record Interval(Instant from, Instant to) implements Comparable<Interval> {

    public Interval {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (!to.isAfter(from)) {
            throw new IllegalArgumentException("interval must end after it starts, was " + from + " .. " + to);
        }
    }

    public static Interval of(Instant from, Instant to) {
        return new Interval(from, to);
    }

    /** The calendar month in UTC, from its first instant to the first instant of the next month. */
    public static Interval month(YearMonth month) {
        return new Interval(month.atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC),
                month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC));
    }

    public Duration length() {
        return Duration.between(from, to);
    }

    /** True when the two share time or one ends exactly where the other starts (they merge into one). */
    public boolean overlapsOrTouches(Interval other) {
        return !from.isAfter(other.to) && !other.from.isAfter(to);
    }

    /** The time both cover, if any. */
    public Optional<Interval> intersection(Interval other) {
        Instant start = from.isAfter(other.from) ? from : other.from;
        Instant end = to.isBefore(other.to) ? to : other.to;
        return end.isAfter(start) ? Optional.of(new Interval(start, end)) : Optional.empty();
    }

    /**
     * The smallest interval at microsecond precision (what PostgreSQL stores) that covers this one: the
     * start rounded down, the end rounded up, so storing it never loses usage.
     */
    public Interval toMicros() {
        Instant start = from.truncatedTo(ChronoUnit.MICROS);
        Instant end = to.truncatedTo(ChronoUnit.MICROS);
        if (end.isBefore(to)) {
            end = end.plus(1, ChronoUnit.MICROS);
        }
        return new Interval(start, end);
    }

    @Override
    public int compareTo(Interval other) {
        int byStart = from.compareTo(other.from);
        return byStart != 0 ? byStart : to.compareTo(other.to);
    }

    @Override
    public String toString() {
        return "[" + from + ", " + to + ")";
    }
}
