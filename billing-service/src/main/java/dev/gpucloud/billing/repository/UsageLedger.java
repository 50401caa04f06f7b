package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.IntervalUnion;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Applies usage events to PostgreSQL exactly once. Each event is one transaction that records its ce_id
 * in the ledger and merges its interval into its allocation's stored union; a ce_id already in the ledger
 * makes the whole event a no-op, so a redelivery after a crash or a producer retry never counts twice.
 */
@ApplicationScoped
public class UsageLedger {

    private static final String INSERT_LEDGER = """
            INSERT INTO usage_ledger (event_id, allocation_id, event_source, event_time, from_ts, to_ts,
                                      kafka_topic, kafka_partition, kafka_offset)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (event_id) DO NOTHING
            RETURNING event_id""";
    private static final String INSERT_ALLOCATION = """
            INSERT INTO allocation (allocation_id, tenant, job_id, node_id, zone, gpu_model, mig_profile,
                                    milli_gpu, units, capacity_type)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (allocation_id) DO NOTHING""";
    private static final String LOCK_ALLOCATION = """
            SELECT tenant, job_id, gpu_model, mig_profile, milli_gpu, units, capacity_type
            FROM allocation WHERE allocation_id = $1 FOR UPDATE""";
    private static final String SELECT_INTERVALS =
            "SELECT from_ts, to_ts FROM allocation_interval WHERE allocation_id = $1";
    private static final String DELETE_INTERVAL =
            "DELETE FROM allocation_interval WHERE allocation_id = $1 AND from_ts = $2";
    private static final String INSERT_INTERVAL =
            "INSERT INTO allocation_interval (allocation_id, from_ts, to_ts) VALUES ($1, $2, $3)";
    /**
     * Records that the event changed usage of months the tenant's invoices already closed: from the event's
     * month to the allocation's last month (the minimum can move a later month's seconds too).
     */
    private static final String LATE = """
            INSERT INTO late_usage (tenant, month, reason, event_id)
            SELECT tenant, month, $4 || month || ' closed', $5 FROM invoice
            WHERE tenant = $1 AND month >= $2 AND month <= $3""";
    private static final String UPDATE_LEDGER = "UPDATE usage_ledger SET added_micros = $2 WHERE event_id = $1";

    private final Pool pool;

    public UsageLedger(Pool pool) {
        this.pool = pool;
    }

    /**
     * Applies one decoded usage event in one transaction. Fails with {@link RefusedUsageException} (and
     * changes nothing) when the event contradicts its allocation's first report.
     */
    public Uni<AppliedUsage> apply(Envelope<UsageEvent> envelope, RecordOrigin origin) {
        UsageEvent event = envelope.payload();
        Interval interval = Interval.of(event.from(), event.to()).toMicros();
        return pool.withTransaction(conn -> conn.preparedQuery(INSERT_LEDGER)
                .execute(Tuple.from(Arrays.asList(envelope.event().id(), event.allocationId(),
                        envelope.event().source(), Timestamps.utc(envelope.event().time()),
                        Timestamps.utc(interval.from()), Timestamps.utc(interval.to()),
                        origin.topic(), origin.partition(), origin.offset())))
                .flatMap(inserted -> inserted.rowCount() == 0
                        ? Uni.createFrom().item(AppliedUsage.repeated())
                        : merge(conn, envelope, interval)));
    }

    private Uni<AppliedUsage> merge(SqlConnection conn, Envelope<UsageEvent> envelope, Interval interval) {
        UsageEvent event = envelope.payload();
        Sku sku = event.sku();
        return conn.preparedQuery(INSERT_ALLOCATION)
                .execute(Tuple.from(Arrays.asList(event.allocationId(), event.tenant(), event.jobId(),
                        event.nodeId(), event.zone(), sku.gpuModel(), sku.migProfile(), sku.milliGpu(),
                        event.units(), event.capacityType().name())))
                .flatMap(ignored -> conn.preparedQuery(LOCK_ALLOCATION).execute(Tuple.of(event.allocationId())))
                .flatMap(locked -> {
                    Row row = locked.iterator().next();
                    MeteredAllocation known = new MeteredAllocation(event.allocationId(), row.getString("tenant"),
                            row.getString("job_id"),
                            new Sku(row.getString("gpu_model"), row.getString("mig_profile"),
                                    row.getInteger("milli_gpu")),
                            row.getInteger("units"), CapacityType.valueOf(row.getString("capacity_type")),
                            IntervalUnion.empty());
                    var conflict = known.conflictWith(event);
                    if (conflict.isPresent()) {
                        return Uni.createFrom().failure(new RefusedUsageException(conflict.get()));
                    }
                    return conn.preparedQuery(SELECT_INTERVALS).execute(Tuple.of(event.allocationId()))
                            .flatMap(rows -> {
                                List<Interval> stored = new ArrayList<>();
                                for (Row r : rows) {
                                    stored.add(Interval.of(r.getOffsetDateTime("from_ts").toInstant(),
                                            r.getOffsetDateTime("to_ts").toInstant()));
                                }
                                IntervalUnion before = IntervalUnion.of(stored);
                                IntervalUnion after = before.with(interval);
                                Duration added = after.total().minus(before.total());
                                return rewrite(conn, event.allocationId(), stored, after)
                                        .flatMap(v -> added.isZero() ? Uni.createFrom().item(0)
                                                : late(conn, envelope, after))
                                        .flatMap(v -> conn.preparedQuery(UPDATE_LEDGER).execute(
                                                Tuple.of(envelope.event().id(), added.toNanos() / 1000)))
                                        .replaceWith(new AppliedUsage(false, added, known.withUsage(after)));
                            });
                });
    }

    /**
     * Runs after the interval rows are written, so a concurrent close (which takes a SHARE lock on
     * allocation_interval) either sees this usage or is seen here as closed.
     */
    private static Uni<Integer> late(SqlConnection conn, Envelope<UsageEvent> envelope, IntervalUnion after) {
        UsageEvent event = envelope.payload();
        List<Interval> intervals = after.intervals();
        Instant lastTo = intervals.get(intervals.size() - 1).to().minusNanos(1000);
        String first = YearMonth.from(event.from().atOffset(ZoneOffset.UTC)).toString();
        String last = YearMonth.from(lastTo.atOffset(ZoneOffset.UTC)).toString();
        String reason = "usage of " + event.allocationId() + " (job " + event.jobId() + ") in [" + event.from() + ", "
                + event.to() + ") arrived after ";
        return conn.preparedQuery(LATE).execute(Tuple.of(event.tenant(), first, last, reason, envelope.event().id()))
                .map(rows -> rows.rowCount());
    }

    private static final String BATCH_ALLOCATIONS = """
            INSERT INTO allocation (allocation_id, tenant, job_id, node_id, zone, gpu_model, mig_profile,
                                    milli_gpu, units, capacity_type)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                 $8::int[], $9::int[], $10::text[])
            ON CONFLICT (allocation_id) DO NOTHING""";
    /** Locked in id order, so two batches that share allocations never deadlock. */
    private static final String BATCH_LOCK = """
            SELECT allocation_id, tenant, job_id, gpu_model, mig_profile, milli_gpu, units, capacity_type
            FROM allocation WHERE allocation_id = ANY($1) ORDER BY allocation_id FOR UPDATE""";
    private static final String BATCH_SEEN = "SELECT event_id FROM usage_ledger WHERE event_id = ANY($1)";
    private static final String BATCH_INTERVALS =
            "SELECT allocation_id, from_ts, to_ts FROM allocation_interval WHERE allocation_id = ANY($1)";
    private static final String BATCH_DELETE_INTERVALS = """
            DELETE FROM allocation_interval d USING unnest($1::text[], $2::timestamptz[]) AS v(a, f)
            WHERE d.allocation_id = v.a AND d.from_ts = v.f""";
    /** An interval that only grew at its end keeps its row (and primary key): its end is updated in place. */
    private static final String BATCH_EXTEND_INTERVALS = """
            UPDATE allocation_interval d SET to_ts = v.t
            FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS v(a, f, t)
            WHERE d.allocation_id = v.a AND d.from_ts = v.f""";
    private static final String BATCH_INSERT_INTERVALS = """
            INSERT INTO allocation_interval (allocation_id, from_ts, to_ts)
            SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[])""";
    private static final String BATCH_LATE = """
            INSERT INTO late_usage (tenant, month, reason, event_id)
            SELECT i.tenant, i.month, v.reason || i.month || ' closed', v.event_id
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS v(tenant, first, last, reason, event_id)
            JOIN invoice i ON i.tenant = v.tenant AND i.month >= v.first AND i.month <= v.last""";
    private static final String BATCH_LEDGER = """
            INSERT INTO usage_ledger (event_id, allocation_id, event_source, event_time, from_ts, to_ts,
                                      kafka_topic, kafka_partition, kafka_offset, added_micros)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                                 $6::timestamptz[], $7::text[], $8::int[], $9::bigint[], $10::bigint[])
            ON CONFLICT (event_id) DO NOTHING""";

    /**
     * Applies a batch of decoded usage events in ONE transaction, with a constant number of statements
     * whatever its size: the allocations first seen are inserted and all the batch's allocations locked (in id
     * order); the ce_ids already in the ledger are repeats; the rest are checked against their allocation's first
     * report, merged into the unions in memory, the changed interval rows rewritten in bulk, and their ledger
     * rows inserted in bulk with what each added. An event that contradicts its allocation is refused and
     * reported (no ledger row), so the caller can dead-letter it. A ce_id repeated within the batch is a repeat.
     * The allocation locks make the "already in the ledger" read exact: events of one allocation share it, so
     * no other transaction can insert their ce_ids meanwhile (the ledger insert still checks, and a conflict
     * fails the batch, to be retried).
     */
    public Uni<UsageBatch> applyBatch(List<UsageBatch.Item> items) {
        if (items.isEmpty()) {
            return Uni.createFrom().item(new UsageBatch(List.of(), List.of()));
        }
        List<UsageBatch.Item> unique = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (UsageBatch.Item item : items) {
            if (seen.add(item.envelope().event().id())) {
                unique.add(item);
            }
        }
        return pool.withTransaction(conn -> mergeBatch(conn, unique).map(result -> {
            List<UsageBatch.Applied> applied = new ArrayList<>();
            for (UsageBatch.Item item : items) {
                AppliedUsage usage = result.applied().get(item);
                if (usage != null) {
                    applied.add(new UsageBatch.Applied(item, usage));
                } else if (!result.refused().containsKey(item)) {
                    applied.add(new UsageBatch.Applied(item, AppliedUsage.repeated()));
                }
            }
            List<UsageBatch.Refused> refused = new ArrayList<>();
            result.refused().forEach((item, reason) -> refused.add(new UsageBatch.Refused(item, reason)));
            return new UsageBatch(applied, refused);
        }));
    }

    private record Merged(Map<UsageBatch.Item, AppliedUsage> applied, Map<UsageBatch.Item, String> refused) {
    }

    private Uni<Merged> mergeBatch(SqlConnection conn, List<UsageBatch.Item> items) {
        Map<UsageBatch.Item, AppliedUsage> applied = new IdentityHashMap<>();
        Map<UsageBatch.Item, String> refused = new IdentityHashMap<>();
        Map<String, UsageEvent> firstReport = new TreeMap<>();
        for (UsageBatch.Item item : items) {
            firstReport.putIfAbsent(item.envelope().payload().allocationId(), item.envelope().payload());
        }
        List<UsageEvent> firsts = new ArrayList<>(firstReport.values());
        int n = firsts.size();
        String[][] columns = new String[8][n];
        Integer[] milli = new Integer[n];
        Integer[] units = new Integer[n];
        for (int i = 0; i < n; i++) {
            UsageEvent e = firsts.get(i);
            columns[0][i] = e.allocationId();
            columns[1][i] = e.tenant();
            columns[2][i] = e.jobId();
            columns[3][i] = e.nodeId();
            columns[4][i] = e.zone();
            columns[5][i] = e.sku().gpuModel();
            columns[6][i] = e.sku().migProfile();
            columns[7][i] = e.capacityType().name();
            milli[i] = e.sku().milliGpu();
            units[i] = e.units();
        }
        String[] allocationIds = columns[0];
        String[] eventIds = items.stream().map(item -> item.envelope().event().id()).toArray(String[]::new);
        Map<String, MeteredAllocation> known = new HashMap<>();
        Set<String> repeats = new HashSet<>();
        return conn.preparedQuery(BATCH_ALLOCATIONS)
                .execute(Tuple.from(new Object[] {columns[0], columns[1], columns[2], columns[3], columns[4],
                        columns[5], columns[6], milli, units, columns[7]}))
                .flatMap(ignored -> conn.preparedQuery(BATCH_LOCK).execute(Tuple.of((Object) allocationIds)))
                .flatMap(locked -> {
                    for (Row row : locked) {
                        String id = row.getString("allocation_id");
                        known.put(id, new MeteredAllocation(id, row.getString("tenant"), row.getString("job_id"),
                                new Sku(row.getString("gpu_model"), row.getString("mig_profile"),
                                        row.getInteger("milli_gpu")),
                                row.getInteger("units"), CapacityType.valueOf(row.getString("capacity_type")),
                                IntervalUnion.empty()));
                    }
                    return conn.preparedQuery(BATCH_SEEN).execute(Tuple.of((Object) eventIds));
                })
                .flatMap(seenRows -> {
                    seenRows.forEach(row -> repeats.add(row.getString("event_id")));
                    List<UsageBatch.Item> accepted = new ArrayList<>();
                    for (UsageBatch.Item item : items) {
                        if (repeats.contains(item.envelope().event().id())) {
                            continue;
                        }
                        var conflict = known.get(item.envelope().payload().allocationId())
                                .conflictWith(item.envelope().payload());
                        if (conflict.isPresent()) {
                            refused.put(item, conflict.get());
                        } else {
                            accepted.add(item);
                        }
                    }
                    if (accepted.isEmpty()) {
                        return Uni.createFrom().item(new Merged(applied, refused));
                    }
                    return conn.preparedQuery(BATCH_INTERVALS).execute(Tuple.of((Object) allocationIds))
                            .flatMap(rows -> {
                                Map<String, List<Interval>> stored = new HashMap<>();
                                for (Row r : rows) {
                                    stored.computeIfAbsent(r.getString("allocation_id"), ignored -> new ArrayList<>())
                                            .add(Interval.of(r.getOffsetDateTime("from_ts").toInstant(),
                                                    r.getOffsetDateTime("to_ts").toInstant()));
                                }
                                return writeBatch(conn, accepted, known, stored, applied);
                            })
                            .replaceWith(new Merged(applied, refused));
                });
    }

    private static Uni<Void> writeBatch(SqlConnection conn, List<UsageBatch.Item> accepted,
            Map<String, MeteredAllocation> known, Map<String, List<Interval>> stored,
            Map<UsageBatch.Item, AppliedUsage> applied) {
        Map<String, IntervalUnion> unions = new HashMap<>();
        Set<String> changed = new HashSet<>();
        int n = accepted.size();
        String[] ids = new String[n];
        String[] allocs = new String[n];
        String[] sources = new String[n];
        OffsetDateTime[] times = new OffsetDateTime[n];
        OffsetDateTime[] froms = new OffsetDateTime[n];
        OffsetDateTime[] tos = new OffsetDateTime[n];
        String[] topics = new String[n];
        Integer[] partitions = new Integer[n];
        Long[] offsets = new Long[n];
        Long[] added = new Long[n];
        for (int i = 0; i < n; i++) {
            UsageBatch.Item item = accepted.get(i);
            UsageEvent event = item.envelope().payload();
            String id = event.allocationId();
            Interval interval = Interval.of(event.from(), event.to()).toMicros();
            IntervalUnion before = unions.computeIfAbsent(id,
                    ignored -> IntervalUnion.of(stored.getOrDefault(id, List.of())));
            IntervalUnion after = before.with(interval);
            Duration more = after.total().minus(before.total());
            unions.put(id, after);
            applied.put(item, new AppliedUsage(false, more, known.get(id).withUsage(after)));
            if (!more.isZero()) {
                changed.add(id);
            }
            ids[i] = item.envelope().event().id();
            allocs[i] = id;
            sources[i] = item.envelope().event().source();
            times[i] = Timestamps.utc(item.envelope().event().time());
            froms[i] = Timestamps.utc(interval.from());
            tos[i] = Timestamps.utc(interval.to());
            topics[i] = item.origin().topic();
            partitions[i] = item.origin().partition();
            offsets[i] = item.origin().offset();
            added[i] = more.toNanos() / 1000;
        }
        // late usage: checked for every event that added time, after the interval rows are written
        List<String[]> late = new ArrayList<>();
        for (UsageBatch.Item item : accepted) {
            if (!applied.get(item).added().isZero()) {
                UsageEvent event = item.envelope().payload();
                List<Interval> intervals = unions.get(event.allocationId()).intervals();
                Instant lastTo = intervals.get(intervals.size() - 1).to().minusNanos(1000);
                late.add(new String[] {event.tenant(), YearMonth.from(event.from().atOffset(ZoneOffset.UTC)).toString(),
                        YearMonth.from(lastTo.atOffset(ZoneOffset.UTC)).toString(),
                        "usage of " + event.allocationId() + " (job " + event.jobId() + ") in [" + event.from() + ", "
                                + event.to() + ") arrived after ", item.envelope().event().id()});
            }
        }
        List<String> deleteAlloc = new ArrayList<>();
        List<OffsetDateTime> deleteFrom = new ArrayList<>();
        List<String> insertAlloc = new ArrayList<>();
        List<OffsetDateTime> insertFrom = new ArrayList<>();
        List<OffsetDateTime> insertTo = new ArrayList<>();
        List<String> extendAlloc = new ArrayList<>();
        List<OffsetDateTime> extendFrom = new ArrayList<>();
        List<OffsetDateTime> extendTo = new ArrayList<>();
        for (String id : changed) {
            Map<Instant, Interval> newByFrom = new HashMap<>();
            for (Interval interval : unions.get(id).intervals()) {
                newByFrom.put(interval.from(), interval);
            }
            Map<Instant, Interval> oldByFrom = new HashMap<>();
            for (Interval interval : stored.getOrDefault(id, List.of())) {
                oldByFrom.put(interval.from(), interval);
                Interval now = newByFrom.get(interval.from());
                if (now == null) {
                    deleteAlloc.add(id);
                    deleteFrom.add(Timestamps.utc(interval.from()));
                } else if (!now.equals(interval)) {
                    extendAlloc.add(id);
                    extendFrom.add(Timestamps.utc(interval.from()));
                    extendTo.add(Timestamps.utc(now.to()));
                }
            }
            for (Interval interval : unions.get(id).intervals()) {
                if (!oldByFrom.containsKey(interval.from())) {
                    insertAlloc.add(id);
                    insertFrom.add(Timestamps.utc(interval.from()));
                    insertTo.add(Timestamps.utc(interval.to()));
                }
            }
        }
        Uni<?> chain = Uni.createFrom().voidItem();
        if (!deleteAlloc.isEmpty()) {
            chain = chain.flatMap(v -> conn.preparedQuery(BATCH_DELETE_INTERVALS).execute(Tuple.of(
                    deleteAlloc.toArray(String[]::new), deleteFrom.toArray(OffsetDateTime[]::new))));
        }
        if (!extendAlloc.isEmpty()) {
            chain = chain.flatMap(v -> conn.preparedQuery(BATCH_EXTEND_INTERVALS).execute(Tuple.of(
                    extendAlloc.toArray(String[]::new), extendFrom.toArray(OffsetDateTime[]::new),
                    extendTo.toArray(OffsetDateTime[]::new))));
        }
        if (!insertAlloc.isEmpty()) {
            chain = chain.flatMap(v -> conn.preparedQuery(BATCH_INSERT_INTERVALS).execute(Tuple.of(
                    insertAlloc.toArray(String[]::new), insertFrom.toArray(OffsetDateTime[]::new),
                    insertTo.toArray(OffsetDateTime[]::new))));
        }
        if (!late.isEmpty()) {
            Object[] columns = new Object[5];
            for (int c = 0; c < 5; c++) {
                final int column = c;
                columns[c] = late.stream().map(row -> row[column]).toArray(String[]::new);
            }
            chain = chain.flatMap(v -> conn.preparedQuery(BATCH_LATE).execute(Tuple.from(columns)));
        }
        return chain.flatMap(v -> conn.preparedQuery(BATCH_LEDGER).execute(Tuple.from(new Object[] {ids, allocs,
                        sources, times, froms, tos, topics, partitions, offsets, added})))
                .flatMap(rows -> rows.rowCount() == n ? Uni.createFrom().voidItem()
                        : Uni.createFrom().failure(new IllegalStateException("ledger insert raced: " + rows.rowCount()
                                + " of " + n + " events inserted; the batch is rolled back and retried")));
    }

    /** Replaces the stored intervals that the merge changed: deletes the old ones, inserts the new ones. */
    private static Uni<Void> rewrite(SqlConnection conn, String allocationId, List<Interval> stored,
            IntervalUnion after) {
        Set<Interval> keep = new HashSet<>(after.intervals());
        Set<Interval> old = new HashSet<>(stored);
        List<Tuple> deletes = new ArrayList<>();
        for (Interval interval : stored) {
            if (!keep.contains(interval)) {
                deletes.add(Tuple.of(allocationId, Timestamps.utc(interval.from())));
            }
        }
        List<Tuple> inserts = new ArrayList<>();
        for (Interval interval : after.intervals()) {
            if (!old.contains(interval)) {
                inserts.add(Tuple.of(allocationId, Timestamps.utc(interval.from()), Timestamps.utc(interval.to())));
            }
        }
        Uni<Void> deleted = deletes.isEmpty() ? Uni.createFrom().voidItem()
                : conn.preparedQuery(DELETE_INTERVAL).executeBatch(deletes).replaceWithVoid();
        return deleted.flatMap(v -> inserts.isEmpty() ? Uni.createFrom().voidItem()
                : conn.preparedQuery(INSERT_INTERVAL).executeBatch(inserts).replaceWithVoid());
    }
}
