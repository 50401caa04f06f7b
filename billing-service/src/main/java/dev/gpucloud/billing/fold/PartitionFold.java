package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.UsageEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The in-memory fold of one partition of the usage topic between two snapshots: the dimensions of the
 * allocations it has seen (for the first-report check) and, per allocation, the union of the usage reported
 * since the last snapshot. A snapshot writes that usage, merged into the stored union, together with
 * {@link #position()} as the partition's next offset, in one transaction, conditional on the stored offset
 * still being {@link #stored()}; {@link #committed} then starts the next round.
 *
 * <p>Offsets: a record below {@link #position()} was folded already (a redelivery after a rebalance or a
 * restart) and is {@link Admission#BELOW skipped}. The first record of a fresh fold must be exactly at the
 * stored offset the consumer was positioned to: a record above it is a leftover of a poll made before that
 * seek, and folding it would leave a hole, so it is {@link Admission#GAP skipped} until the record at the
 * stored offset arrives (the poll after the seek brings it). Not thread-safe: one caller at a time.
 */
public final class PartitionFold {

    /** What to do with a consumed record, decided by its offset alone. */
    public enum Admission {
        /** Fold it (or dead-letter it): it is the next record of the partition. */
        FOLD,
        /** Already folded and stored (or in this fold): skip it. */
        BELOW,
        /** Above the position before anything was folded: a leftover of a poll before the seek; skip it. */
        GAP
    }

    /** One allocation's part in the next snapshot. */
    public record Pending(MeteredAllocation dimensions, boolean isNew, String nodeId, String zone,
            IntervalUnion added, String firstEventId, Instant firstFrom, Instant lastTo) {
    }

    /** What the next snapshot of this partition writes. */
    public record Snapshot(String topic, int partition, long stored, long position, List<Pending> allocations,
            long events) {
    }

    private static final class Known {
        final MeteredAllocation dimensions;
        boolean isNew;
        String nodeId;
        String zone;
        IntervalUnion added = IntervalUnion.empty();
        String firstEventId;
        Instant firstFrom;
        Instant lastTo;

        Known(MeteredAllocation dimensions, boolean isNew) {
            this.dimensions = dimensions;
            this.isNew = isNew;
        }

        boolean dirty() {
            return isNew || !added.isEmpty();
        }
    }

    private final String topic;
    private final int partition;
    private long stored;
    private long position;
    private boolean started;
    private final Map<String, Known> allocations = new HashMap<>();
    private final Map<String, Known> dirty = new HashMap<>();
    private long events;

    /** A fold of {@code topic}-{@code partition} whose stored next offset is {@code stored}, starting there. */
    public PartitionFold(String topic, int partition, long stored) {
        this(topic, partition, stored, stored);
    }

    /**
     * A fold whose stored next offset is {@code stored} that starts at {@code start}: above it when the log no
     * longer holds the records in between (retention deleted them before they were folded); below it when the
     * log is not the one the offset was stored against (the topic was recreated, or the service points at
     * another cluster: its end is below the stored offset), so it is folded from its beginning and the union
     * of intervals makes usage that is already stored count once.
     */
    public PartitionFold(String topic, int partition, long stored, long start) {
        if (stored < 0) {
            throw new IllegalArgumentException("stored offset must be >= 0, was " + stored);
        }
        if (start < 0) {
            throw new IllegalArgumentException("start offset must be >= 0, was " + start);
        }
        this.topic = topic;
        this.partition = partition;
        this.stored = stored;
        this.position = start;
    }

    public String topic() {
        return topic;
    }

    public int partition() {
        return partition;
    }

    /** The next offset as stored in the database when this fold last loaded or wrote it. */
    public long stored() {
        return stored;
    }

    /** The offset of the next record to fold. */
    public long position() {
        return position;
    }

    /** Decides what to do with the record at {@code offset}; {@link Admission#FOLD} moves the position past it. */
    public Admission admit(long offset) {
        if (offset < position) {
            return Admission.BELOW;
        }
        if (!started && offset > position) {
            return Admission.GAP;
        }
        started = true;
        position = offset + 1;
        return Admission.FOLD;
    }

    /** Of these allocation ids, the ones whose dimensions this fold does not know yet. */
    public List<String> unknown(Collection<String> allocationIds) {
        List<String> unknown = new ArrayList<>();
        for (String id : allocationIds) {
            if (!allocations.containsKey(id)) {
                unknown.add(id);
            }
        }
        return unknown;
    }

    /** Tells the fold an allocation's stored dimensions (its usage is ignored: the store holds it). */
    public void know(MeteredAllocation stored) {
        allocations.putIfAbsent(stored.allocationId(), new Known(stored.withUsage(IntervalUnion.empty()), false));
    }

    /**
     * Folds one admitted usage event. Returns the reason if it contradicts its allocation's first report
     * (nothing changes then); the allocation is new if neither the store nor this fold knew it.
     */
    public Optional<String> fold(String eventId, UsageEvent event) {
        Known known = allocations.get(event.allocationId());
        if (known == null) {
            known = new Known(MeteredAllocation.from(event).withUsage(IntervalUnion.empty()), true);
            known.nodeId = event.nodeId();
            known.zone = event.zone();
            allocations.put(event.allocationId(), known);
        } else {
            Optional<String> conflict = known.dimensions.conflictWith(event);
            if (conflict.isPresent()) {
                return conflict;
            }
        }
        Interval interval = Interval.of(event.from(), event.to()).toMicros();
        known.added = known.added.with(interval);
        if (known.firstEventId == null) {
            known.firstEventId = eventId;
        }
        if (known.firstFrom == null || interval.from().isBefore(known.firstFrom)) {
            known.firstFrom = interval.from();
        }
        if (known.lastTo == null || interval.to().isAfter(known.lastTo)) {
            known.lastTo = interval.to();
        }
        dirty.put(event.allocationId(), known);
        events++;
        return Optional.empty();
    }

    /**
     * Forgets an allocation: its dimensions and the usage folded for it since the last snapshot (a snapshot
     * refused it and its records were isolated; the ones the database takes are folded again). The position
     * does not move back: the isolated records are dead-lettered, the others folded again by the caller.
     */
    public void discard(String allocationId, int eventsFolded) {
        allocations.remove(allocationId);
        dirty.remove(allocationId);
        events = Math.max(0, events - eventsFolded);
    }

    /** Whether a snapshot has anything to write: usage, or an offset moved past skipped or dead-lettered records. */
    public boolean hasPending() {
        return position != stored || !dirty.isEmpty();
    }

    /** Events folded since the last snapshot. */
    public long pendingEvents() {
        return events;
    }

    /** What a snapshot now would write. */
    public Snapshot snapshot() {
        List<Pending> pending = new ArrayList<>(dirty.size());
        for (Known known : dirty.values()) {
            pending.add(new Pending(known.dimensions, known.isNew, known.nodeId, known.zone, known.added, known.firstEventId, known.firstFrom,
                    known.lastTo));
        }
        return new Snapshot(topic, partition, stored, position, pending, events);
    }

    /** The snapshot was written: its offset is now the stored one and its usage is in the store. */
    public void committed(Snapshot snapshot) {
        if (snapshot.stored() != stored) {
            throw new IllegalStateException("snapshot of " + topic + "-" + partition + " from offset "
                    + snapshot.stored() + " does not continue this fold's stored offset " + stored);
        }
        stored = snapshot.position();
        for (Pending pending : snapshot.allocations()) {
            Known known = dirty.get(pending.dimensions().allocationId());
            if (known == null) {
                continue;
            }
            known.isNew = false;
            if (known.added == pending.added()) { // nothing folded since: clean (else rewritten next time, idempotent)
                dirty.remove(pending.dimensions().allocationId());
                known.added = IntervalUnion.empty();
                known.firstEventId = null;
                known.firstFrom = null;
                known.lastTo = null;
            }
        }
        events = Math.max(0, events - snapshot.events());
    }

    /** Forgets the dimensions of clean allocations once more than {@code max} are known (they reload on demand). */
    public void trim(int max) {
        if (allocations.size() > max) {
            allocations.values().removeIf(known -> !known.dirty());
        }
    }

    /** How many allocations this fold knows. */
    public int known() {
        return allocations.size();
    }
}
