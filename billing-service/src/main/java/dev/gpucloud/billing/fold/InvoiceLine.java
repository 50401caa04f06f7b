package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import java.time.Instant;
import java.util.Objects;

/**
 * One line of an invoice: a job's billed SKU-seconds of one SKU and capacity type at one rate in the month,
 * the rate per SKU-hour and the amount. {@code flag} is set when the rate is a fallback (see {@link SkuRate}).
 * {@code rateFrom} is set when the catalog changed that SKU's price within the month: the line then covers
 * only usage from that instant to the next line's (or the month's end), and a line per rate shows the split.
 */
public record InvoiceLine(
        String jobId,
        String sku,
        CapacityType capacityType,
        long seconds,
        long rateMicrosPerHour,
        long amountMicros,
        String flag,
        Instant rateFrom) {

    public InvoiceLine {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(sku, "sku");
        Objects.requireNonNull(capacityType, "capacityType");
        if (seconds < 0 || rateMicrosPerHour < 0 || amountMicros < 0) {
            throw new IllegalArgumentException("invoice line figures must be >= 0");
        }
    }

    /** A line whose rate held for the whole month. */
    public InvoiceLine(String jobId, String sku, CapacityType capacityType, long seconds, long rateMicrosPerHour,
            long amountMicros, String flag) {
        this(jobId, sku, capacityType, seconds, rateMicrosPerHour, amountMicros, flag, null);
    }

    public boolean isFlagged() {
        return flag != null;
    }
}
