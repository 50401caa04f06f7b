package dev.gpucloud.billing.fold;

import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Objects;

/**
 * A tenant's invoice for a month as it stands: OPEN (priced from the stored usage when read) or CLOSED
 * (frozen at {@code closedAt}), with its own usage lines, the adjustments it carries for earlier closed
 * months, and the adjustments finance booked on it by hand. The total is the sum of all three, in micro-USD,
 * each counted once.
 */
public record InvoiceStatement(String tenant, YearMonth month, Instant closedAt, List<InvoiceLine> lines,
        List<AdjustmentLine> adjustments, List<ManualAdjustment> manualAdjustments) {

    public InvoiceStatement {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(month, "month");
        lines = List.copyOf(lines);
        adjustments = List.copyOf(adjustments);
        manualAdjustments = List.copyOf(manualAdjustments);
        for (ManualAdjustment manual : manualAdjustments) {
            if (!manual.tenant().equals(tenant) || !manual.month().equals(month)) {
                throw new IllegalArgumentException("adjustment " + manual.id() + " belongs to " + manual.tenant() + " "
                        + manual.month() + ", not to " + tenant + " " + month);
            }
        }
    }

    /** An invoice without manual adjustments. */
    public InvoiceStatement(String tenant, YearMonth month, Instant closedAt, List<InvoiceLine> lines,
            List<AdjustmentLine> adjustments) {
        this(tenant, month, closedAt, lines, adjustments, List.of());
    }

    public boolean isClosed() {
        return closedAt != null;
    }

    public String status() {
        return isClosed() ? "CLOSED" : "OPEN";
    }

    public long totalMicros() {
        long total = Math.addExact(new Invoice(tenant, month, lines).totalMicros(), Adjustments.totalMicros(adjustments));
        for (ManualAdjustment manual : manualAdjustments) {
            total = Math.addExact(total, manual.amountMicros());
        }
        return total;
    }

    /** The total in USD, rounded half-even to cents. */
    public String totalUsd() {
        return MicroUsd.toUsdCents(totalMicros());
    }
}
