package dev.gpucloud.billing.fold;

import java.time.YearMonth;
import java.util.List;
import java.util.Objects;

/** A tenant's charges for one calendar month (UTC): its lines and their total. */
public record Invoice(String tenant, YearMonth month, List<InvoiceLine> lines) {

    public Invoice {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(month, "month");
        lines = List.copyOf(lines);
    }

    public static Invoice empty(String tenant, YearMonth month) {
        return new Invoice(tenant, month, List.of());
    }

    public long totalMicros() {
        long total = 0;
        for (InvoiceLine line : lines) {
            total = Math.addExact(total, line.amountMicros());
        }
        return total;
    }

    /** The total in USD, rounded half-even to cents, e.g. "12.35". */
    public String totalUsd() {
        return MicroUsd.toUsdCents(totalMicros());
    }
}
