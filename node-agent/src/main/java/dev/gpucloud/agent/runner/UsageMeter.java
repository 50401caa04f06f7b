package dev.gpucloud.agent.runner;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts one allocation's time into usage intervals of a fixed length, counted from its start, so the
 * intervals it hands out are contiguous, never overlap, and together cover exactly
 * {@code [start, end)}. However late it is asked, the boundaries stay where the clock says.
 */
public final class UsageMeter {

    private final Duration interval;
    private Instant reportedUntil;
    private boolean closed;

    public UsageMeter(Instant start, Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("usage interval must be positive, was " + interval);
        }
        this.interval = interval;
        this.reportedUntil = start;
    }

    /** The whole intervals that ended by {@code until} and were not handed out before. */
    public List<Interval> due(Instant until) {
        List<Interval> out = new ArrayList<>();
        if (closed) {
            return out;
        }
        Instant next = reportedUntil.plus(interval);
        while (!next.isAfter(until)) {
            out.add(new Interval(reportedUntil, next));
            reportedUntil = next;
            next = reportedUntil.plus(interval);
        }
        return out;
    }

    /** Everything not handed out yet up to {@code end}, where the allocation stopped; then nothing more. */
    public List<Interval> close(Instant end) {
        List<Interval> out = due(end);
        if (!closed && end.isAfter(reportedUntil)) {
            out.add(new Interval(reportedUntil, end));
            reportedUntil = end;
        }
        closed = true;
        return out;
    }

    /** When the next whole interval ends: nothing is due before then. */
    public Instant nextBoundary() {
        return reportedUntil.plus(interval);
    }

    /** Where the last interval handed out ends (the start while none was). */
    public Instant reportedUntil() {
        return reportedUntil;
    }
}
