package dev.gpucloud.billing.fold;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.Collection;
import java.util.Objects;
import java.util.Set;

/**
 * When a tenant's invoice for a month closes, and which invoice a correction of a closed month lands on.
 * An invoice is OPEN until {@code grace} after its month (UTC) ends, then CLOSED: frozen for good.
 */
public record InvoiceClosing(Duration grace) {

    public InvoiceClosing {
        Objects.requireNonNull(grace, "grace");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("close grace must be >= 0, was " + grace);
        }
    }

    /** The instant at which invoices of {@code month} close. */
    public Instant closesAt(YearMonth month) {
        return Interval.month(month).to().plus(grace);
    }

    public boolean isDue(YearMonth month, Instant now) {
        return !now.isBefore(closesAt(month));
    }

    /** The latest month whose invoices are due to close at {@code now}. */
    public YearMonth lastDueMonth(Instant now) {
        YearMonth month = YearMonth.from(now.minus(grace).atOffset(java.time.ZoneOffset.UTC));
        return isDue(month, now) ? month : month.minusMonths(1);
    }

    /**
     * Whether {@code month} has ended at {@code now}: only then may finance close it ahead of its grace period. A
     * month still running can get more usage, so closing it would only move that usage to the next invoice.
     */
    public static boolean hasEnded(YearMonth month, Instant now) {
        return !now.isBefore(Interval.month(month).to());
    }

    /**
     * The invoice a manual adjustment goes on when finance names no month: the earliest month that is not closed
     * among the months the tenant has something billed in ({@code active}: usage, adjustments) and the current
     * one, never later than the current one. So a credit lands on the invoice the tenant gets next, and never on
     * a month long past that nothing would otherwise bill.
     */
    public static YearMonth earliestOpen(Collection<YearMonth> active, Set<YearMonth> closed, YearMonth current) {
        YearMonth earliest = null;
        for (YearMonth month : active) {
            if (!closed.contains(month) && !month.isAfter(current) && (earliest == null || month.isBefore(earliest))) {
                earliest = month;
            }
        }
        return earliest != null ? earliest : nextOpen(current.minusMonths(1), closed);
    }

    /** The invoice an adjustment for closed month {@code late} goes on: the first month after it not yet closed. */
    public static YearMonth nextOpen(YearMonth late, Set<YearMonth> closed) {
        YearMonth month = late.plusMonths(1);
        while (closed.contains(month)) {
            month = month.plusMonths(1);
        }
        return month;
    }
}
