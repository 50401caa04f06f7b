package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.IntervalUnion;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads stored usage back, always for one tenant: the tenant is part of every query, never a filter after it. */
@ApplicationScoped
public class UsageHistory {

    /**
     * The intervals, up to the month's end, of the tenant's allocations that have usage in the month.
     * Earlier intervals come along because they decide how much of an allocation's minimum is left.
     */
    private static final String ALLOCATIONS_IN_MONTH = """
            SELECT a.allocation_id, a.job_id, a.gpu_model, a.mig_profile, a.milli_gpu, a.units, a.capacity_type,
                   i.from_ts, i.to_ts
            FROM allocation a JOIN allocation_interval i ON i.allocation_id = a.allocation_id
            WHERE a.tenant = $1 AND i.from_ts < $3
              AND EXISTS (SELECT 1 FROM allocation_interval m
                          WHERE m.allocation_id = a.allocation_id AND m.from_ts < $3 AND m.to_ts > $2)
            ORDER BY a.allocation_id, i.from_ts""";

    /** Every calendar month (UTC) that any of the tenant's usage intervals touches. */
    private static final String MONTHS = """
            SELECT DISTINCT to_char(m, 'YYYY-MM') AS month
            FROM allocation a
            JOIN allocation_interval i ON i.allocation_id = a.allocation_id
            CROSS JOIN LATERAL generate_series(
                    date_trunc('month', i.from_ts AT TIME ZONE 'UTC'),
                    date_trunc('month', (i.to_ts - interval '1 microsecond') AT TIME ZONE 'UTC'),
                    interval '1 month') AS m
            WHERE a.tenant = $1
            ORDER BY month""";

    private final Pool pool;

    public UsageHistory(Pool pool) {
        this.pool = pool;
    }

    /** The tenant's allocations with usage in {@code month}, each with its usage up to the month's end. */
    public Uni<List<MeteredAllocation>> allocations(String tenant, YearMonth month) {
        return allocations(pool, tenant, month);
    }

    /** As {@link #allocations(String, YearMonth)}, read through {@code client} (e.g. inside a transaction). */
    public Uni<List<MeteredAllocation>> allocations(SqlClient client, String tenant, YearMonth month) {
        Interval window = Interval.month(month);
        return client.preparedQuery(ALLOCATIONS_IN_MONTH)
                .execute(Tuple.of(tenant, Timestamps.utc(window.from()), Timestamps.utc(window.to())))
                .map(rows -> {
                    Map<String, MeteredAllocation> byId = new LinkedHashMap<>();
                    Map<String, List<Interval>> intervals = new LinkedHashMap<>();
                    for (Row row : rows) {
                        String id = row.getString("allocation_id");
                        byId.computeIfAbsent(id, ignored -> new MeteredAllocation(id, tenant, row.getString("job_id"),
                                new Sku(row.getString("gpu_model"), row.getString("mig_profile"),
                                        row.getInteger("milli_gpu")),
                                row.getInteger("units"), CapacityType.valueOf(row.getString("capacity_type")),
                                IntervalUnion.empty()));
                        intervals.computeIfAbsent(id, ignored -> new ArrayList<>()).add(Interval.of(
                                row.getOffsetDateTime("from_ts").toInstant(), row.getOffsetDateTime("to_ts").toInstant()));
                    }
                    List<MeteredAllocation> result = new ArrayList<>();
                    byId.forEach((id, allocation) -> result.add(allocation.withUsage(IntervalUnion.of(intervals.get(id)))));
                    return result;
                });
    }

    /** The months, oldest first, in which the tenant has usage. */
    public Uni<List<YearMonth>> months(String tenant) {
        return months(pool, tenant);
    }

    /** As {@link #months(String)}, read through {@code client} (e.g. inside a transaction). */
    public Uni<List<YearMonth>> months(SqlClient client, String tenant) {
        return client.preparedQuery(MONTHS).execute(Tuple.of(tenant)).map(rows -> {
            List<YearMonth> months = new ArrayList<>();
            for (Row row : rows) {
                months.add(YearMonth.parse(row.getString("month")));
            }
            return months;
        });
    }
}
