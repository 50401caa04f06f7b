package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.InvoiceClosing;
import dev.gpucloud.billing.fold.ManualAdjustment;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Finance's manual adjustments in PostgreSQL ({@code manual_adjustment}): each is booked once per idempotency key
 * on one OPEN month of one tenant, and stays there; {@link InvoiceBook} counts it on that month's invoice and
 * freezes it when the month closes. Booking and closing exclude each other through table locks (booking SHARE ROW
 * EXCLUSIVE, closing SHARE), so an adjustment is never booked on a month that closed without it.
 */
@ApplicationScoped
public class AdjustmentBook {

    private static final String COLUMNS = "id, idempotency_key, tenant, month, requested_month, amount_micros, reason,"
            + " booked_by, booked_at";
    private static final String BY_KEY = "SELECT " + COLUMNS + " FROM manual_adjustment WHERE idempotency_key = $1";
    private static final String ON_INVOICE = "SELECT " + COLUMNS
            + " FROM manual_adjustment WHERE tenant = $1 AND month = $2 ORDER BY id";
    private static final String MONTHS = "SELECT DISTINCT month FROM manual_adjustment WHERE tenant = $1";
    private static final String INSERT = "INSERT INTO manual_adjustment (idempotency_key, tenant, month,"
            + " requested_month, amount_micros, reason, booked_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING "
            + COLUMNS;
    /** Months with manual adjustments whose invoice is not closed yet, for the closer. */
    private static final String OPEN_MONTHS = """
            SELECT DISTINCT tenant, month FROM manual_adjustment WHERE ($1::text IS NULL OR tenant = $1)
            EXCEPT SELECT tenant, month FROM invoice""";

    /** What finance asks to book: {@code month} null lets billing choose the earliest open month. */
    public record Request(String idempotencyKey, String tenant, YearMonth month, long amountMicros, String reason,
            String bookedBy) {

        public Request {
            ManualAdjustment.idempotencyKey(idempotencyKey);
            Objects.requireNonNull(tenant, "tenant");
            ManualAdjustment.amount(amountMicros);
            ManualAdjustment.reason(reason);
            Objects.requireNonNull(bookedBy, "bookedBy");
        }
    }

    /** How a booking ended. */
    public sealed interface Booking {
    }

    /** Booked now. */
    public record Booked(ManualAdjustment adjustment) implements Booking {
    }

    /** The same request came before under this key: this is what it booked; nothing new is. */
    public record Repeated(ManualAdjustment adjustment) implements Booking {
    }

    /** The key was used for another request (another tenant, month, amount or reason): nothing booked. */
    public record KeyTaken(ManualAdjustment earlier) implements Booking {
    }

    /** The month the request named is closed: a closed invoice never changes. Nothing booked. */
    public record MonthClosed(YearMonth month, Instant closedAt) implements Booking {
    }

    private final Pool pool;
    private final UsageHistory history;

    public AdjustmentBook(Pool pool, UsageHistory history) {
        this.pool = pool;
        this.history = history;
    }

    /**
     * Books {@code request} at {@code now}, once: a repeat of an earlier request under the same key answers what
     * that one booked, and the key with another request, or a closed month, books nothing.
     */
    public Uni<Booking> book(Request request, Instant now) {
        return pool.withTransaction(conn -> conn.query("LOCK TABLE manual_adjustment IN SHARE ROW EXCLUSIVE MODE")
                .execute()
                .flatMap(locked -> conn.preparedQuery(BY_KEY).execute(Tuple.of(request.idempotencyKey())))
                .flatMap(rows -> {
                    if (rows.iterator().hasNext()) {
                        Row earlier = rows.iterator().next();
                        ManualAdjustment adjustment = adjustment(earlier);
                        return Uni.createFrom().item(sameRequest(earlier, request) ? new Repeated(adjustment)
                                : new KeyTaken(adjustment));
                    }
                    return InvoiceBook.closedMonths(conn, request.tenant()).flatMap(closed -> {
                        if (request.month() != null) {
                            return closed.containsKey(request.month())
                                    ? Uni.createFrom().item(new MonthClosed(request.month(), closed.get(request.month())))
                                    : insert(conn, request, request.month());
                        }
                        return activeMonths(conn, request.tenant()).flatMap(active -> insert(conn, request,
                                InvoiceClosing.earliestOpen(active, closed.keySet(),
                                        YearMonth.from(now.atOffset(ZoneOffset.UTC)))));
                    });
                }));
    }

    /** The manual adjustments booked on {@code tenant}'s invoice for {@code month}, in the order booked. */
    public Uni<List<ManualAdjustment>> onInvoice(SqlClient client, String tenant, YearMonth month) {
        return client.preparedQuery(ON_INVOICE).execute(Tuple.of(tenant, month.toString())).map(rows -> {
            List<ManualAdjustment> adjustments = new ArrayList<>();
            rows.forEach(row -> adjustments.add(adjustment(row)));
            return adjustments;
        });
    }

    /** The months in which {@code tenant} has manual adjustments. */
    public Uni<Set<YearMonth>> months(SqlClient client, String tenant) {
        return client.preparedQuery(MONTHS).execute(Tuple.of(tenant)).map(rows -> {
            Set<YearMonth> months = new HashSet<>();
            rows.forEach(row -> months.add(YearMonth.parse(row.getString("month"))));
            return months;
        });
    }

    /** Tenant and month of every invoice that has manual adjustments and is not closed ({@code null}: all tenants). */
    public Uni<List<Map.Entry<String, YearMonth>>> openInvoices(String onlyTenant) {
        return pool.preparedQuery(OPEN_MONTHS).execute(Tuple.of(onlyTenant)).map(rows -> {
            List<Map.Entry<String, YearMonth>> open = new ArrayList<>();
            rows.forEach(row -> open.add(Map.entry(row.getString("tenant"), YearMonth.parse(row.getString("month")))));
            return open;
        });
    }

    private Uni<Set<YearMonth>> activeMonths(SqlClient conn, String tenant) {
        return history.months(conn, tenant).flatMap(used -> months(conn, tenant).map(manual -> {
            Set<YearMonth> active = new HashSet<>(used);
            active.addAll(manual);
            return active;
        }));
    }

    private static Uni<Booking> insert(SqlClient conn, Request request, YearMonth month) {
        return conn.preparedQuery(INSERT).execute(Tuple.from(java.util.Arrays.asList(request.idempotencyKey(),
                        request.tenant(), month.toString(), request.month() == null ? null : request.month().toString(),
                        request.amountMicros(), request.reason(), request.bookedBy())))
                .map(rows -> new Booked(adjustment(rows.iterator().next())));
    }

    /** The same request: the same tenant, the same month asked for (or none), amount and reason. */
    private static boolean sameRequest(Row earlier, Request request) {
        String asked = request.month() == null ? null : request.month().toString();
        return earlier.getString("tenant").equals(request.tenant())
                && Objects.equals(earlier.getString("requested_month"), asked)
                && earlier.getLong("amount_micros") == request.amountMicros()
                && earlier.getString("reason").equals(request.reason());
    }

    static ManualAdjustment adjustment(Row row) {
        return new ManualAdjustment(row.getLong("id"), row.getString("tenant"), YearMonth.parse(row.getString("month")),
                row.getLong("amount_micros"), row.getString("reason"), row.getString("idempotency_key"),
                row.getString("booked_by"), row.getOffsetDateTime("booked_at").toInstant());
    }
}
