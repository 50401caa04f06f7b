package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import java.util.Objects;

/**
 * One line of an invoice: a job's billed SKU-seconds of one SKU and capacity type in the month, the rate
 * per SKU-hour and the amount. {@code flag} is set when the rate is a fallback (see {@link SkuRate}).
 */
public record InvoiceLine(
        String jobId,
        String sku,
        CapacityType capacityType,
        long seconds,
        long rateMicrosPerHour,
        long amountMicros,
        String flag) {

    public InvoiceLine {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(sku, "sku");
        Objects.requireNonNull(capacityType, "capacityType");
        if (seconds < 0 || rateMicrosPerHour < 0 || amountMicros < 0) {
            throw new IllegalArgumentException("invoice line figures must be >= 0");
        }
    }

    public boolean isFlagged() {
        return flag != null;
    }
}
