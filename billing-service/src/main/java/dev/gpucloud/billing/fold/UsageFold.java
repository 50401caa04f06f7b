package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.UsageEvent;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Usage events folded into allocations, in memory: an event id seen before changes nothing, an interval
 * adds only the time its allocation did not have yet, and a report whose dimensions contradict its
 * allocation's first report is refused. The service keeps the same state in PostgreSQL, one transaction
 * per event; this class is the rule in its plainest form (and serves replays and tests).
 */
public final class UsageFold {

    /** What applying one event did. */
    public enum Outcome {
        /** The event was new; {@code added} is how much usage its allocation gained (possibly none). */
        APPLIED,
        /** The event id was seen before: nothing changed. */
        REPEAT,
        /** The event contradicts its allocation: nothing changed, {@code reason} says why. */
        REFUSED
    }

    /** The outcome of one event. */
    public record Applied(Outcome outcome, Duration added, String reason) {
        static Applied applied(Duration added) {
            return new Applied(Outcome.APPLIED, added, null);
        }
    }

    private final Map<String, MeteredAllocation> allocations = new LinkedHashMap<>();
    private final Set<String> seenEventIds = new HashSet<>();

    /** Applies one event, identified by its CloudEvent id. */
    public Applied apply(String eventId, UsageEvent event) {
        if (seenEventIds.contains(eventId)) {
            return new Applied(Outcome.REPEAT, Duration.ZERO, null);
        }
        MeteredAllocation known = allocations.get(event.allocationId());
        if (known == null) {
            MeteredAllocation first = MeteredAllocation.from(event);
            allocations.put(event.allocationId(), first);
            seenEventIds.add(eventId);
            return Applied.applied(first.usage().total());
        }
        Optional<String> conflict = known.conflictWith(event);
        if (conflict.isPresent()) {
            return new Applied(Outcome.REFUSED, Duration.ZERO, conflict.get());
        }
        MeteredAllocation grown = known.with(Interval.of(event.from(), event.to()));
        allocations.put(event.allocationId(), grown);
        seenEventIds.add(eventId);
        return Applied.applied(grown.usage().total().minus(known.usage().total()));
    }

    public Collection<MeteredAllocation> allocations() {
        return allocations.values();
    }

    public Optional<MeteredAllocation> allocation(String allocationId) {
        return Optional.ofNullable(allocations.get(allocationId));
    }
}
