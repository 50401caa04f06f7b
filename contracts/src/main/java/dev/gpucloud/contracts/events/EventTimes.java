package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import java.time.Instant;

/**
 * The time checks of the limits table that depend on the receiver's clock, applied where a record is
 * consumed (never in a constructor, so a stored or simulated event always reads back): every event time
 * lies within the service's epoch and at most the clock skew ahead of now; a submitted job's deadline lies
 * ahead, within the horizon.
 */
public final class EventTimes {

    private EventTimes() {
    }

    /** Checks a decoded payload's times; a failure is an IllegalArgumentException naming the field. */
    public static void check(Object payload, Instant now) {
        if (payload instanceof UsageEvent u) {
            Check.eventTime(u.from(), now, "from");
            Check.eventTime(u.to(), now, "to");
        } else if (payload instanceof TelemetrySample t) {
            Check.time(t.sampledAt(), "sampledAt"); // metrics drops samples too far off its clock, and counts them
        } else if (payload instanceof AllocationEvent a) {
            Check.eventTime(a.occurredAt(), now, "occurredAt");
        } else if (payload instanceof NodeEvent n) {
            Check.eventTime(n.occurredAt(), now, "occurredAt");
            Check.time(n.deadline(), "deadline");
        } else if (payload instanceof HostInventory h) {
            Check.eventTime(h.observedAt(), now, "observedAt");
        } else if (payload instanceof NodeCommand c) {
            Check.eventTime(c.issuedAt(), now, "issuedAt");
            Check.time(c.deadline(), "deadline");
        } else if (payload instanceof JobEvent j) {
            Check.eventTime(j.occurredAt(), now, "occurredAt");
        } else if (payload instanceof JobRequest r) {
            r.spec().requireDeadlineAhead(now);
        } else if (payload instanceof JobLogChunk l) {
            for (JobLogChunk.Line line : l.lines()) {
                Check.eventTime(line.at(), now, "lines[].at");
            }
        } else if (payload instanceof GpuAdvisory g) {
            Check.eventTime(g.since(), now, "since");
            Check.eventTime(g.raisedAt(), now, "raisedAt");
        }
    }
}
