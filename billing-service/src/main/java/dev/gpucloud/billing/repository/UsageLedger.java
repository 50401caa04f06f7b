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
import java.util.ArrayList;
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
                                        .flatMap(v -> conn.preparedQuery(UPDATE_LEDGER).execute(
                                                Tuple.of(envelope.event().id(), added.toNanos() / 1000)))
                                        .replaceWith(new AppliedUsage(false, added, known.withUsage(after)));
                            });
                });
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
