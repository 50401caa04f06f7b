package dev.gpucloud.billing.fold;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The time covered by a set of intervals, each instant once: repeated, overlapping or out-of-order
 * reports add nothing twice, and gaps stay gaps. Held as sorted intervals that neither overlap nor touch.
 */
public final class IntervalUnion {

    private static final IntervalUnion EMPTY = new IntervalUnion(List.of());

    private final List<Interval> intervals;

    private IntervalUnion(List<Interval> disjointSorted) {
        this.intervals = disjointSorted;
    }

    public static IntervalUnion empty() {
        return EMPTY;
    }

    public static IntervalUnion of(Interval... intervals) {
        return of(List.of(intervals));
    }

    /** The union of any intervals, in any order. */
    public static IntervalUnion of(Collection<Interval> intervals) {
        List<Interval> sorted = new ArrayList<>(intervals);
        sorted.sort(null);
        List<Interval> merged = new ArrayList<>();
        for (Interval next : sorted) {
            Objects.requireNonNull(next, "interval");
            int last = merged.size() - 1;
            if (last >= 0 && merged.get(last).overlapsOrTouches(next)) {
                Interval current = merged.get(last);
                if (next.to().isAfter(current.to())) {
                    merged.set(last, new Interval(current.from(), next.to()));
                }
            } else {
                merged.add(next);
            }
        }
        return merged.isEmpty() ? EMPTY : new IntervalUnion(List.copyOf(merged));
    }

    /** This union plus one more interval. */
    public IntervalUnion with(Interval interval) {
        List<Interval> all = new ArrayList<>(intervals);
        all.add(interval);
        return of(all);
    }

    /** The sorted, disjoint, non-touching intervals. */
    public List<Interval> intervals() {
        return intervals;
    }

    public boolean isEmpty() {
        return intervals.isEmpty();
    }

    /** How much time the union covers. */
    public Duration total() {
        Duration total = Duration.ZERO;
        for (Interval interval : intervals) {
            total = total.plus(interval.length());
        }
        return total;
    }

    /** The part of the union inside {@code window}. */
    public IntervalUnion within(Interval window) {
        List<Interval> clipped = new ArrayList<>();
        for (Interval interval : intervals) {
            interval.intersection(window).ifPresent(clipped::add);
        }
        return clipped.isEmpty() ? EMPTY : new IntervalUnion(List.copyOf(clipped));
    }

    /** The part of the union before {@code end}. */
    public IntervalUnion before(Instant end) {
        if (intervals.isEmpty() || !end.isAfter(intervals.get(0).from())) {
            return EMPTY;
        }
        return within(new Interval(intervals.get(0).from(), end));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IntervalUnion union && union.intervals.equals(intervals);
    }

    @Override
    public int hashCode() {
        return intervals.hashCode();
    }

    @Override
    public String toString() {
        return intervals.toString();
    }
}
