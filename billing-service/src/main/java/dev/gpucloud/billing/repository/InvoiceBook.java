package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.AdjustmentLine;
import dev.gpucloud.billing.fold.Adjustments;
import dev.gpucloud.billing.fold.BillingPolicy;
import dev.gpucloud.billing.fold.InvoiceCalculator;
import dev.gpucloud.billing.fold.InvoiceClosing;
import dev.gpucloud.billing.fold.InvoiceLine;
import dev.gpucloud.billing.fold.InvoiceStatement;
import dev.gpucloud.billing.fold.ManualAdjustment;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.ReservedCommitment;
import dev.gpucloud.contracts.events.CapacityType;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jboss.logging.Logger;
import dev.gpucloud.billing.config.BillingConfig;
import dev.gpucloud.contracts.logging.LogFields;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Invoices as they stand: a month is OPEN and priced from the stored usage when read, until it is CLOSED
 * ({@link #close}) and its lines are frozen in {@code invoice_line}. A closed month never changes: whatever it
 * still owes (late usage, held usage priced since) is an adjustment on the tenant's next open invoice,
 * computed as "priced now minus billed so far" ({@link Adjustments}) and frozen when that invoice closes.
 * Finance's manual adjustments ({@link AdjustmentBook}) count on the open invoice they were booked on and are
 * frozen with it. Every query names the tenant.
 */
@ApplicationScoped
public class InvoiceBook {

    private static final Logger LOG = Logger.getLogger(InvoiceBook.class);

    private static final String CLOSED_MONTHS = "SELECT month, closed_at FROM invoice WHERE tenant = $1";
    /**
     * A closed invoice's frozen lines; a MANUAL line with the adjustment it froze (its id, key, who booked it and
     * when; the amount and reason are the line's own, frozen copies).
     */
    private static final String LINES = """
            SELECT l.kind, l.for_month, l.reason, l.job_id, l.sku, l.capacity_type, l.seconds, l.rate_micros_per_hour,
                   l.amount_micros, l.flag, l.rate_from, m.id, m.idempotency_key, m.tenant, m.month, m.booked_by,
                   m.booked_at
            FROM invoice_line l LEFT JOIN manual_adjustment m ON m.id = l.adjustment_id
            WHERE l.tenant = $1 AND l.month = $2 ORDER BY l.line_no""";
    /** What a closed month's usage was billed so far: its USAGE lines and later ADJUSTMENTs for it, never MANUAL ones. */
    private static final String BILLED_FOR = """
            SELECT kind, for_month, reason, job_id, sku, capacity_type, seconds, rate_micros_per_hour, amount_micros,
                   flag, rate_from
            FROM invoice_line WHERE tenant = $1 AND for_month = $2 AND kind IN ('USAGE', 'ADJUSTMENT')
            ORDER BY month, line_no""";
    private static final String PENDING = """
            SELECT id, month, reason FROM late_usage WHERE tenant = $1 AND settled_in IS NULL ORDER BY month, id""";
    private static final String INSERT_INVOICE = """
            INSERT INTO invoice (tenant, month, total_micros) VALUES ($1, $2, $3)
            ON CONFLICT (tenant, month) DO NOTHING RETURNING closed_at""";
    private static final String INSERT_LINE = """
            INSERT INTO invoice_line (tenant, month, line_no, kind, for_month, reason, job_id, sku, capacity_type,
                                      seconds, rate_micros_per_hour, amount_micros, flag, rate_from, adjustment_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)""";
    private static final String SETTLE = """
            UPDATE late_usage SET settled_in = $2
            WHERE tenant = $1 AND settled_in IS NULL AND month = ANY($3) AND id <= $4""";
    /** Tenant and month of every usage interval up to the last month due; the months not closed yet are candidates. */
    private static final String USAGE_MONTHS = """
            SELECT DISTINCT a.tenant, to_char(m, 'YYYY-MM') AS month
            FROM allocation a
            JOIN allocation_interval i ON i.allocation_id = a.allocation_id
            CROSS JOIN LATERAL generate_series(
                    date_trunc('month', i.from_ts AT TIME ZONE 'UTC'),
                    date_trunc('month', (i.to_ts - interval '1 microsecond') AT TIME ZONE 'UTC'),
                    interval '1 month') AS m
            WHERE i.from_ts < $1 AND ($2::text IS NULL OR a.tenant = $2)
            EXCEPT SELECT tenant, month FROM invoice""";
    private static final String PENDING_TENANTS = """
            SELECT DISTINCT tenant FROM late_usage WHERE settled_in IS NULL AND ($1::text IS NULL OR tenant = $1)""";

    private final Pool pool;
    private final UsageHistory history;
    private final CatalogStore catalogs;
    private final BillingPolicy policy;
    private final List<ReservedCommitment> commitments;
    private final InvoiceClosing closing;
    private final AdjustmentBook manual;

    public InvoiceBook(Pool pool, UsageHistory history, CatalogStore catalogs, InvoiceCalculator configured,
            BillingConfig config, AdjustmentBook manual) {
        this.pool = pool;
        this.history = history;
        this.manual = manual;
        this.catalogs = catalogs;
        this.policy = configured.policy();
        this.commitments = configured.commitments();
        this.closing = new InvoiceClosing(config.closeGrace());
    }

    public InvoiceClosing closing() {
        return closing;
    }

    /**
     * The tenant's invoice for {@code month}: frozen if closed, else priced now with the adjustments it carries and
     * the manual adjustments booked on it.
     */
    public Uni<InvoiceStatement> statement(String tenant, YearMonth month) {
        return closedMonths(pool, tenant).flatMap(closed -> {
            if (closed.containsKey(month)) {
                return frozen(pool, tenant, month, closed.get(month));
            }
            return catalogs.current(pool).flatMap(catalog -> {
                InvoiceCalculator calculator = calculator(catalog);
                return history.allocations(pool, tenant, month)
                        .map(allocations -> calculator.invoice(tenant, month, allocations))
                        .flatMap(invoice -> adjustmentsOn(pool, calculator, tenant, month, closed.keySet())
                                .flatMap(carried -> manual.onInvoice(pool, tenant, month)
                                        .map(booked -> new InvoiceStatement(tenant, month, null, invoice.lines(),
                                                carried.lines(), booked))));
            });
        });
    }

    /**
     * The months the tenant has usage in, manual adjustments on or an invoice for, oldest first, and which of them
     * are closed.
     */
    public Uni<Map<YearMonth, Boolean>> months(String tenant) {
        return history.months(tenant).flatMap(used -> manual.months(pool, tenant).flatMap(booked -> closedMonths(pool,
                tenant).map(closed -> {
            Map<YearMonth, Boolean> months = new TreeMap<>();
            used.forEach(month -> months.put(month, closed.containsKey(month)));
            booked.forEach(month -> months.put(month, closed.containsKey(month)));
            closed.keySet().forEach(month -> months.put(month, true));
            return months;
        })));
    }

    /**
     * Closes the tenant's invoice for {@code month}: prices it, with the adjustments it carries for earlier
     * closed months and the manual adjustments booked on it, and freezes the lines, in one transaction that first
     * waits for the usage transactions and bookings in flight and holds new ones back until it commits (SHARE locks
     * on {@code allocation_interval} and {@code manual_adjustment}), so usage is either on this invoice or recorded
     * as late, and a booking either on this invoice or refused for it. Returns false if it was closed already.
     */
    public Uni<Boolean> close(String tenant, YearMonth month) {
        return pool.withTransaction(conn -> conn.query("LOCK TABLE allocation_interval IN SHARE MODE").execute()
                .flatMap(locked -> conn.query("LOCK TABLE manual_adjustment IN SHARE MODE").execute())
                .flatMap(locked -> closedMonths(conn, tenant))
                .flatMap(closed -> {
                    if (closed.containsKey(month)) {
                        return Uni.createFrom().item(false);
                    }
                    return catalogs.current(conn).flatMap(catalog -> {
                        InvoiceCalculator calculator = calculator(catalog);
                        return history.allocations(conn, tenant, month)
                                .map(allocations -> calculator.invoice(tenant, month, allocations))
                                .flatMap(invoice -> adjustmentsOn(conn, calculator, tenant, month, closed.keySet())
                                        .flatMap(carried -> manual.onInvoice(conn, tenant, month)
                                                .flatMap(booked -> freeze(conn, new InvoiceStatement(tenant, month,
                                                        Instant.EPOCH, invoice.lines(), carried.lines(), booked),
                                                        carried))));
                    });
                }));
    }

    /** Closes every invoice whose grace period is over at {@code now}, oldest month first; returns how many. */
    public Uni<Integer> closeDue(Instant now) {
        return closeDue(now, null);
    }

    /** As {@link #closeDue(Instant)}, for one tenant only ({@code null}: all). */
    public Uni<Integer> closeDue(Instant now, String onlyTenant) {
        YearMonth lastDue = closing.lastDueMonth(now);
        Instant cutoff = dev.gpucloud.billing.fold.Interval.month(lastDue).to();
        Uni<List<Candidate>> byUsage = pool.preparedQuery(USAGE_MONTHS).execute(Tuple.of(Timestamps.utc(cutoff), onlyTenant))
                .map(rows -> {
                    List<Candidate> candidates = new ArrayList<>();
                    for (Row row : rows) {
                        YearMonth month = YearMonth.parse(row.getString("month"));
                        if (!month.isAfter(lastDue)) {
                            candidates.add(new Candidate(row.getString("tenant"), month));
                        }
                    }
                    return candidates;
                });
        Uni<List<Candidate>> byLate = pool.preparedQuery(PENDING_TENANTS).execute(Tuple.of(onlyTenant)).flatMap(rows -> {
            List<String> tenants = new ArrayList<>();
            rows.forEach(row -> tenants.add(row.getString("tenant")));
            return Multi.createFrom().iterable(tenants)
                    .onItem().transformToUniAndConcatenate(tenant -> closedMonths(pool, tenant)
                            .flatMap(closed -> pending(pool, tenant).map(pending -> {
                                List<Candidate> candidates = new ArrayList<>();
                                for (YearMonth late : pending.reasons().keySet()) {
                                    YearMonth next = InvoiceClosing.nextOpen(late, closed.keySet());
                                    if (!next.isAfter(lastDue)) {
                                        candidates.add(new Candidate(tenant, next));
                                    }
                                }
                                return candidates;
                            })))
                    .collect().asList()
                    .map(lists -> lists.stream().flatMap(List::stream).toList());
        });
        // a month with nothing but manual adjustments on it closes in turn too
        Uni<List<Candidate>> byManual = manual.openInvoices(onlyTenant).map(open -> open.stream()
                .filter(invoice -> !invoice.getValue().isAfter(lastDue))
                .map(invoice -> new Candidate(invoice.getKey(), invoice.getValue())).toList());
        return byUsage.flatMap(usage -> byLate.flatMap(late -> byManual.map(booked -> {
            TreeSet<Candidate> all = new TreeSet<>((a, b) -> a.month().equals(b.month())
                    ? a.tenant().compareTo(b.tenant()) : a.month().compareTo(b.month()));
            all.addAll(usage);
            all.addAll(late);
            all.addAll(booked);
            return List.copyOf(all);
        }))).flatMap(candidates -> Multi.createFrom().iterable(candidates)
                .onItem().transformToUniAndConcatenate(candidate -> close(candidate.tenant(), candidate.month())
                        .invoke(done -> {
                            if (done) {
                                try (LogFields fields = LogFields.of(LogFields.TENANT, candidate.tenant())) {
                                    LOG.infof("closed the invoice of tenant %s for %s", candidate.tenant(),
                                            candidate.month());
                                }
                            }
                        }))
                .collect().asList()
                .map(results -> (int) results.stream().filter(Boolean::booleanValue).count()));
    }

    private record Candidate(String tenant, YearMonth month) {
    }

    private InvoiceCalculator calculator(PriceCatalog catalog) {
        return new InvoiceCalculator(policy, catalog, commitments);
    }

    /** Adjustments an invoice carries, the closed months they settle, and the last late_usage id considered. */
    private record Carried(List<AdjustmentLine> lines, List<YearMonth> months, long lastId) {
    }

    /** The adjustments invoice {@code month} carries: for each closed month with pending late usage whose next open invoice it is. */
    private Uni<Carried> adjustmentsOn(SqlClient client, InvoiceCalculator calculator, String tenant,
            YearMonth month, Set<YearMonth> closed) {
        return pending(client, tenant).flatMap(pending -> {
            List<YearMonth> lateMonths = pending.reasons().keySet().stream()
                    .filter(late -> closed.contains(late) && InvoiceClosing.nextOpen(late, closed).equals(month))
                    .toList();
            return Multi.createFrom().iterable(lateMonths)
                    .onItem().transformToUniAndConcatenate(late -> owed(client, calculator, tenant, late,
                            reason(pending.reasons().get(late))))
                    .collect().asList()
                    .map(lists -> new Carried(lists.stream().flatMap(List::stream).toList(), lateMonths,
                            pending.lastId()));
        });
    }

    /** What closed month {@code late} owes on top of what it billed so far. */
    private Uni<List<AdjustmentLine>> owed(SqlClient client, InvoiceCalculator calculator, String tenant,
            YearMonth late, String reason) {
        return history.allocations(client, tenant, late)
                .map(allocations -> calculator.invoice(tenant, late, allocations))
                .flatMap(now -> client.preparedQuery(BILLED_FOR).execute(Tuple.of(tenant, late.toString()))
                        .map(rows -> {
                            List<InvoiceLine> billed = new ArrayList<>();
                            List<AdjustmentLine> adjusted = new ArrayList<>();
                            for (Row row : rows) {
                                if (row.getString("kind").equals("USAGE")) {
                                    billed.add(line(row));
                                } else {
                                    adjusted.add(adjustment(row));
                                }
                            }
                            return Adjustments.between(late, reason, now.lines(), billed, adjusted);
                        }));
    }

    private static String reason(List<String> reasons) {
        Set<String> distinct = new LinkedHashSet<>(reasons);
        List<String> shown = distinct.stream().limit(3).toList();
        String text = String.join("; ", shown);
        return distinct.size() > shown.size() ? text + "; and " + (distinct.size() - shown.size()) + " more" : text;
    }

    private Uni<Boolean> freeze(SqlClient conn, InvoiceStatement statement, Carried carried) {
        String tenant = statement.tenant();
        String month = statement.month().toString();
        return conn.preparedQuery(INSERT_INVOICE).execute(Tuple.of(tenant, month, statement.totalMicros()))
                .flatMap(inserted -> {
                    if (inserted.rowCount() == 0) {
                        return Uni.createFrom().item(false);
                    }
                    List<Tuple> rows = new ArrayList<>();
                    int lineNo = 0;
                    for (InvoiceLine line : statement.lines()) {
                        rows.add(Tuple.from(Arrays.asList(tenant, month, ++lineNo, "USAGE", month, null,
                                line.jobId(), line.sku(), line.capacityType().name(), line.seconds(),
                                line.rateMicrosPerHour(), line.amountMicros(), line.flag(),
                                line.rateFrom() == null ? null : Timestamps.utc(line.rateFrom()), null)));
                    }
                    for (AdjustmentLine line : statement.adjustments()) {
                        rows.add(Tuple.from(Arrays.asList(tenant, month, ++lineNo, "ADJUSTMENT",
                                line.forMonth().toString(), line.reason(), line.jobId(), line.sku(),
                                line.capacityType().name(), line.seconds(), line.rateMicrosPerHour(),
                                line.amountMicros(), line.flag(),
                                line.rateFrom() == null ? null : Timestamps.utc(line.rateFrom()), null)));
                    }
                    // a manual adjustment is an amount: no job, SKU, capacity type or seconds of its own
                    for (ManualAdjustment booked : statement.manualAdjustments()) {
                        rows.add(Tuple.from(Arrays.asList(tenant, month, ++lineNo, "MANUAL", month, booked.reason(),
                                "", "", "", 0L, 0L, booked.amountMicros(), null, null, booked.id())));
                    }
                    Uni<?> lines = rows.isEmpty() ? Uni.createFrom().voidItem()
                            : conn.preparedQuery(INSERT_LINE).executeBatch(rows);
                    // each month considered is settled: its adjustment is on this invoice, or it owed nothing
                    String[] settled = carried.months().stream().map(YearMonth::toString).toArray(String[]::new);
                    return lines.flatMap(done -> conn.preparedQuery(SETTLE).execute(Tuple.of(tenant, month,
                                    settled, carried.lastId())))
                            .replaceWith(true);
                });
    }

    private Uni<InvoiceStatement> frozen(SqlClient client, String tenant, YearMonth month, Instant closedAt) {
        return client.preparedQuery(LINES).execute(Tuple.of(tenant, month.toString())).map(rows -> {
            List<InvoiceLine> lines = new ArrayList<>();
            List<AdjustmentLine> adjustments = new ArrayList<>();
            List<ManualAdjustment> booked = new ArrayList<>();
            for (Row row : rows) {
                switch (row.getString("kind")) {
                    case "USAGE" -> lines.add(line(row));
                    case "MANUAL" -> booked.add(AdjustmentBook.adjustment(row));
                    default -> adjustments.add(adjustment(row));
                }
            }
            return new InvoiceStatement(tenant, month, closedAt, lines, adjustments, booked);
        });
    }

    static Uni<Map<YearMonth, Instant>> closedMonths(SqlClient client, String tenant) {
        return client.preparedQuery(CLOSED_MONTHS).execute(Tuple.of(tenant)).map(rows -> {
            Map<YearMonth, Instant> closed = new TreeMap<>();
            for (Row row : rows) {
                closed.put(YearMonth.parse(row.getString("month")), row.getOffsetDateTime("closed_at").toInstant());
            }
            return closed;
        });
    }

    private record Pending(Map<YearMonth, List<String>> reasons, long lastId) {
    }

    private static Uni<Pending> pending(SqlClient client, String tenant) {
        return client.preparedQuery(PENDING).execute(Tuple.of(tenant)).map(rows -> {
            Map<YearMonth, List<String>> reasons = new TreeMap<>();
            long lastId = 0;
            for (Row row : rows) {
                reasons.computeIfAbsent(YearMonth.parse(row.getString("month")), ignored -> new ArrayList<>())
                        .add(row.getString("reason"));
                lastId = Math.max(lastId, row.getLong("id"));
            }
            return new Pending(reasons, lastId);
        });
    }

    private static InvoiceLine line(Row row) {
        return new InvoiceLine(row.getString("job_id"), row.getString("sku"),
                CapacityType.valueOf(row.getString("capacity_type")), row.getLong("seconds"),
                row.getLong("rate_micros_per_hour"), row.getLong("amount_micros"), row.getString("flag"),
                instant(row.getOffsetDateTime("rate_from")));
    }

    private static AdjustmentLine adjustment(Row row) {
        return new AdjustmentLine(YearMonth.parse(row.getString("for_month")), row.getString("reason"),
                row.getString("job_id"), row.getString("sku"), CapacityType.valueOf(row.getString("capacity_type")),
                row.getLong("seconds"), row.getLong("rate_micros_per_hour"), row.getLong("amount_micros"),
                row.getString("flag"), instant(row.getOffsetDateTime("rate_from")));
    }

    private static Instant instant(OffsetDateTime time) {
        return time == null ? null : time.toInstant();
    }

}
