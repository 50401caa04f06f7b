package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.IntervalUnion;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.PartitionFold;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the in-memory folds ({@link PartitionFold}) become durable: each snapshot is ONE transaction that
 * moves the partitions' stored next offsets (table {@code fold_offset}), conditionally on each still being
 * the offset its fold loaded, and writes the usage folded since (new allocations, the changed interval rows
 * merged into the stored union, late-usage rows for closed months). Either all of it commits or none: the
 * stored offset says exactly which records the stored usage includes, so after a crash the consumer resumes
 * there and nothing is lost or counted twice (a re-folded interval is a no-op in a union anyway).
 */
@ApplicationScoped
public class FoldStore {

    /**
     * Every statement of a snapshot finds its rows by primary key: thousands of (allocation, start) pairs joined
     * from {@code unnest} arrays, which the planner estimates at 10 rows. A defence against stale statistics
     * (right after a bulk insert into a near-empty table) making it join them with a sequential scan, quadratic
     * in the allocations: within the snapshot's transaction only, sequential scans are ruled out. (A psql
     * trial with 5,000 fresh rows got the index plan without it, in about 100 ms: a guard, not a measured fix.)
     */
    private static final String INDEX_LOOKUPS = "SET LOCAL enable_seqscan = off";
    private static final String ENSURE_OFFSET = """
            INSERT INTO fold_offset (topic, kafka_partition, next_offset) VALUES ($1, $2, $3)
            ON CONFLICT (topic, kafka_partition) DO NOTHING""";
    private static final String OFFSET =
            "SELECT next_offset FROM fold_offset WHERE topic = $1 AND kafka_partition = $2";
    /** The zombie fence: a partition whose offset moved since its fold loaded it is not in the result. */
    private static final String ADVANCE = """
            UPDATE fold_offset f SET next_offset = v.next, updated_at = now()
            FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS v(topic, part, stored, next)
            WHERE f.topic = v.topic AND f.kafka_partition = v.part AND f.next_offset = v.stored
            RETURNING f.topic, f.kafka_partition""";
    private static final String DIMENSIONS = """
            SELECT allocation_id, tenant, job_id, gpu_model, mig_profile, milli_gpu, units, capacity_type
            FROM allocation WHERE allocation_id = ANY($1)""";
    private static final String INSERT_ALLOCATIONS = """
            INSERT INTO allocation (allocation_id, tenant, job_id, node_id, zone, gpu_model, mig_profile,
                                    milli_gpu, units, capacity_type)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                 $8::int[], $9::int[], $10::text[])
            ON CONFLICT (allocation_id) DO NOTHING""";
    private static final String INTERVALS =
            "SELECT allocation_id, from_ts, to_ts FROM allocation_interval WHERE allocation_id = ANY($1)";
    private static final String DELETE_INTERVALS = """
            DELETE FROM allocation_interval d USING unnest($1::text[], $2::timestamptz[]) AS v(a, f)
            WHERE d.allocation_id = v.a AND d.from_ts = v.f""";
    /** An interval that only grew at its end keeps its row (and primary key): its end is updated in place. */
    private static final String EXTEND_INTERVALS = """
            UPDATE allocation_interval d SET to_ts = v.t
            FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS v(a, f, t)
            WHERE d.allocation_id = v.a AND d.from_ts = v.f""";
    private static final String INSERT_INTERVALS = """
            INSERT INTO allocation_interval (allocation_id, from_ts, to_ts)
            SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[])""";
    /**
     * Usage that changed months whose invoices are closed: from the first month it touched to the allocation's
     * last month (the minimum can move a later month's seconds too). Runs after the interval rows are written,
     * so a concurrent close (SHARE lock on allocation_interval) either saw this usage or is seen here as closed.
     */
    private static final String LATE = """
            INSERT INTO late_usage (tenant, month, reason, event_id)
            SELECT i.tenant, i.month, v.reason || i.month || ' closed', v.event_id
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS v(tenant, first, last, reason, event_id)
            JOIN invoice i ON i.tenant = v.tenant AND i.month >= v.first AND i.month <= v.last""";

    private static final Logger LOG = Logger.getLogger(FoldStore.class);

    private final Pool pool;

    /** One statement of a snapshot, its duration logged at DEBUG (where a slow snapshot spends its time). */
    private static <T> Uni<T> timed(String what, Uni<T> statement) {
        if (!LOG.isDebugEnabled()) {
            return statement;
        }
        long[] started = new long[1];
        return statement.onSubscription().invoke(() -> started[0] = System.nanoTime())
                .invoke(() -> LOG.debugf("snapshot statement %s: %.1f ms", what, (System.nanoTime() - started[0]) / 1e6));
    }

    public FoldStore(Pool pool) {
        this.pool = pool;
    }

    /**
     * The stored next offset of a partition; a partition never snapshotted gets {@code fallback} stored first
     * (where the consumer group's committed offset or the log's start puts it).
     */
    public Uni<Long> loadOffset(String topic, int partition, long fallback) {
        return pool.preparedQuery(ENSURE_OFFSET).execute(Tuple.of(topic, partition, fallback))
                .flatMap(ignored -> pool.preparedQuery(OFFSET).execute(Tuple.of(topic, partition)))
                .map(rows -> rows.iterator().next().getLong("next_offset"));
    }

    /** The stored dimensions of these allocations (those the store has; usage left empty). */
    public Uni<List<MeteredAllocation>> dimensions(List<String> allocationIds) {
        if (allocationIds.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return pool.preparedQuery(DIMENSIONS).execute(Tuple.of((Object) allocationIds.toArray(String[]::new)))
                .map(rows -> {
                    List<MeteredAllocation> known = new ArrayList<>();
                    for (Row row : rows) {
                        known.add(new MeteredAllocation(row.getString("allocation_id"), row.getString("tenant"),
                                row.getString("job_id"), new Sku(row.getString("gpu_model"),
                                        row.getString("mig_profile"), row.getInteger("milli_gpu")),
                                row.getInteger("units"), CapacityType.valueOf(row.getString("capacity_type")),
                                IntervalUnion.empty()));
                    }
                    return known;
                });
    }

    /**
     * Writes these snapshots in one transaction. Fails with {@link StaleFoldException}, writing nothing, if any
     * partition's stored offset is no longer the one its fold loaded.
     */
    public Uni<Void> write(List<PartitionFold.Snapshot> snapshots) {
        if (snapshots.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<PartitionFold.Snapshot> sorted = new ArrayList<>(snapshots);
        sorted.sort(Comparator.comparing(PartitionFold.Snapshot::topic).thenComparingInt(PartitionFold.Snapshot::partition));
        return pool.withTransaction(conn -> timed("begin", conn.query(INDEX_LOOKUPS).execute())
                .flatMap(v -> advance(conn, sorted)).flatMap(v -> writeUsage(conn, sorted)));
    }

    /**
     * Writes these allocations' usage in a transaction that is always rolled back: whether the database would
     * take them (a snapshot that failed on bad data is bisected with it to find the allocation at fault).
     * Completes with empty when it would, else with the failure.
     */
    public Uni<java.util.Optional<Throwable>> probe(List<PartitionFold.Pending> allocations) {
        PartitionFold.Snapshot probe = new PartitionFold.Snapshot("probe", 0, 0, 0, allocations, 0);
        return pool.withTransaction(conn -> writeUsage(conn, List.of(probe))
                        .flatMap(v -> Uni.createFrom().<Void>failure(new ProbeRolledBack())))
                .map(v -> java.util.Optional.<Throwable>empty())
                .onFailure().recoverWithItem(e -> e instanceof ProbeRolledBack ? java.util.Optional.empty()
                        : java.util.Optional.of(e));
    }

    /** Ends a probe's transaction: it must never commit. */
    private static final class ProbeRolledBack extends RuntimeException {
        ProbeRolledBack() {
            super("probe", null, false, false);
        }
    }

    private static Uni<Void> advance(SqlConnection conn, List<PartitionFold.Snapshot> snapshots) {
        int n = snapshots.size();
        String[] topics = new String[n];
        Integer[] partitions = new Integer[n];
        Long[] stored = new Long[n];
        Long[] next = new Long[n];
        for (int i = 0; i < n; i++) {
            PartitionFold.Snapshot s = snapshots.get(i);
            topics[i] = s.topic();
            partitions[i] = s.partition();
            stored[i] = s.stored();
            next[i] = s.position();
        }
        return timed("advance", conn.preparedQuery(ADVANCE).execute(Tuple.of(topics, partitions, stored, next))).flatMap(rows -> {
            Set<StaleFoldException.Partition> moved = new HashSet<>();
            for (Row row : rows) {
                moved.add(new StaleFoldException.Partition(row.getString("topic"), row.getInteger("kafka_partition")));
            }
            List<StaleFoldException.Partition> stale = new ArrayList<>();
            for (PartitionFold.Snapshot s : snapshots) {
                StaleFoldException.Partition p = new StaleFoldException.Partition(s.topic(), s.partition());
                if (!moved.contains(p)) {
                    stale.add(p);
                }
            }
            return stale.isEmpty() ? Uni.createFrom().voidItem()
                    : Uni.createFrom().failure(new StaleFoldException(stale));
        });
    }

    private static Uni<Void> writeUsage(SqlConnection conn, List<PartitionFold.Snapshot> snapshots) {
        Map<String, PartitionFold.Pending> pending = new HashMap<>();
        List<PartitionFold.Pending> fresh = new ArrayList<>();
        for (PartitionFold.Snapshot s : snapshots) {
            for (PartitionFold.Pending p : s.allocations()) {
                pending.put(p.dimensions().allocationId(), p);
                if (p.isNew()) {
                    fresh.add(p);
                }
            }
        }
        if (pending.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Uni<?> chain = Uni.createFrom().voidItem();
        if (!fresh.isEmpty()) {
            chain = chain.flatMap(v -> insertAllocations(conn, fresh));
        }
        String[] ids = pending.keySet().toArray(String[]::new);
        return chain.flatMap(v -> timed("read intervals", conn.preparedQuery(INTERVALS).execute(Tuple.of((Object) ids)))).flatMap(rows -> {
            Map<String, List<Interval>> stored = new HashMap<>();
            for (Row r : rows) {
                stored.computeIfAbsent(r.getString("allocation_id"), ignored -> new ArrayList<>())
                        .add(Interval.of(r.getOffsetDateTime("from_ts").toInstant(),
                                r.getOffsetDateTime("to_ts").toInstant()));
            }
            return merge(conn, pending, stored);
        });
    }

    private static Uni<?> insertAllocations(SqlConnection conn, List<PartitionFold.Pending> fresh) {
        int n = fresh.size();
        String[][] columns = new String[8][n];
        Integer[] milli = new Integer[n];
        Integer[] units = new Integer[n];
        for (int i = 0; i < n; i++) {
            MeteredAllocation a = fresh.get(i).dimensions();
            columns[0][i] = a.allocationId();
            columns[1][i] = a.tenant();
            columns[2][i] = a.jobId();
            columns[3][i] = fresh.get(i).nodeId();
            columns[4][i] = fresh.get(i).zone();
            columns[5][i] = a.sku().gpuModel();
            columns[6][i] = a.sku().migProfile();
            columns[7][i] = a.capacityType().name();
            milli[i] = a.sku().milliGpu();
            units[i] = a.units();
        }
        return timed("insert allocations", conn.preparedQuery(INSERT_ALLOCATIONS).execute(Tuple.from(new Object[] {
                columns[0], columns[1], columns[2], columns[3], columns[4], columns[5], columns[6], milli, units,
                columns[7]})));
    }

    /** Merges each allocation's new usage into its stored union and writes the interval rows that changed. */
    private static Uni<Void> merge(SqlConnection conn, Map<String, PartitionFold.Pending> pending,
            Map<String, List<Interval>> stored) {
        List<String> deleteAlloc = new ArrayList<>();
        List<OffsetDateTime> deleteFrom = new ArrayList<>();
        List<String> insertAlloc = new ArrayList<>();
        List<OffsetDateTime> insertFrom = new ArrayList<>();
        List<OffsetDateTime> insertTo = new ArrayList<>();
        List<String> extendAlloc = new ArrayList<>();
        List<OffsetDateTime> extendFrom = new ArrayList<>();
        List<OffsetDateTime> extendTo = new ArrayList<>();
        List<String[]> late = new ArrayList<>();
        for (PartitionFold.Pending p : pending.values()) {
            String id = p.dimensions().allocationId();
            List<Interval> before = stored.getOrDefault(id, List.of());
            List<Interval> all = new ArrayList<>(before);
            all.addAll(p.added().intervals());
            IntervalUnion after = IntervalUnion.of(all);
            if (after.intervals().equals(IntervalUnion.of(before).intervals())) {
                continue; // all of it was stored already (a replay after a crash, or a repeat)
            }
            Map<Instant, Interval> newByFrom = new HashMap<>();
            for (Interval interval : after.intervals()) {
                newByFrom.put(interval.from(), interval);
            }
            Map<Instant, Interval> oldByFrom = new HashMap<>();
            for (Interval interval : before) {
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
            for (Interval interval : after.intervals()) {
                if (!oldByFrom.containsKey(interval.from())) {
                    insertAlloc.add(id);
                    insertFrom.add(Timestamps.utc(interval.from()));
                    insertTo.add(Timestamps.utc(interval.to()));
                }
            }
            List<Interval> intervals = after.intervals();
            Instant lastTo = intervals.get(intervals.size() - 1).to().minusNanos(1000);
            MeteredAllocation a = p.dimensions();
            late.add(new String[] {a.tenant(), YearMonth.from(p.firstFrom().atOffset(ZoneOffset.UTC)).toString(),
                    YearMonth.from(lastTo.atOffset(ZoneOffset.UTC)).toString(),
                    "usage of " + id + " (job " + a.jobId() + ") in [" + p.firstFrom() + ", " + p.lastTo()
                            + ") arrived after ", p.firstEventId()});
        }
        Uni<?> chain = Uni.createFrom().voidItem();
        if (!deleteAlloc.isEmpty()) {
            chain = chain.flatMap(v -> timed("delete intervals", conn.preparedQuery(DELETE_INTERVALS).execute(Tuple.of(
                    deleteAlloc.toArray(String[]::new), deleteFrom.toArray(OffsetDateTime[]::new)))));
        }
        if (!extendAlloc.isEmpty()) {
            chain = chain.flatMap(v -> timed("extend intervals", conn.preparedQuery(EXTEND_INTERVALS).execute(Tuple.of(
                    extendAlloc.toArray(String[]::new), extendFrom.toArray(OffsetDateTime[]::new),
                    extendTo.toArray(OffsetDateTime[]::new)))));
        }
        if (!insertAlloc.isEmpty()) {
            chain = chain.flatMap(v -> timed("insert intervals", conn.preparedQuery(INSERT_INTERVALS).execute(Tuple.of(
                    insertAlloc.toArray(String[]::new), insertFrom.toArray(OffsetDateTime[]::new),
                    insertTo.toArray(OffsetDateTime[]::new)))));
        }
        if (!late.isEmpty()) {
            Object[] columns = new Object[5];
            for (int c = 0; c < 5; c++) {
                final int column = c;
                columns[c] = late.stream().map(row -> row[column]).toArray(String[]::new);
            }
            chain = chain.flatMap(v -> timed("late usage", conn.preparedQuery(LATE).execute(Tuple.from(columns))));
        }
        return chain.replaceWithVoid();
    }
}
