package dev.gpucloud.billing.fold;

import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Objects;

/**
 * A tenant's invoice for a month as it stands: OPEN (priced from the stored usage when read) or CLOSED
 * (frozen at {@code closedAt}), with its own usage lines and the adjustments it carries for earlier closed
 * months. The total is the sum of both, in micro-USD.
 */
public record InvoiceStatement(String tenant, YearMonth month, Instant closedAt, List<InvoiceLine> lines,
        List<AdjustmentLine> adjustments) {

    public InvoiceStatement {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(month, "month");
        lines = List.copyOf(lines);
        adjustments = List.copyOf(adjustments);
    }

    public boolean isClosed() {
        return closedAt != null;
    }

    public String status() {
        return isClosed() ? "CLOSED" : "OPEN";
    }

    public long totalMicros() {
        return Math.addExact(new Invoice(tenant, month, lines).totalMicros(), Adjustments.totalMicros(adjustments));
    }

    /** The total in USD, rounded half-even to cents. */
    public String totalUsd() {
        return MicroUsd.toUsdCents(totalMicros());
    }
}
