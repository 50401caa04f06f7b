package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import java.time.Instant;
import java.time.YearMonth;
import java.util.Objects;

/**
 * A correction of a CLOSED month, billed on a later invoice: how many SKU-seconds and micro-USD the closed
 * month's line {@code (jobId, sku, capacityType, rate, rateFrom)} grows (or, negative, shrinks) by, and why.
 * The closed invoice itself never changes.
 */
public record AdjustmentLine(
        YearMonth forMonth,
        String reason,
        String jobId,
        String sku,
        CapacityType capacityType,
        long seconds,
        long rateMicrosPerHour,
        long amountMicros,
        String flag,
        Instant rateFrom) {

    public AdjustmentLine {
        Objects.requireNonNull(forMonth, "forMonth");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(sku, "sku");
        Objects.requireNonNull(capacityType, "capacityType");
        if (rateMicrosPerHour < 0) {
            throw new IllegalArgumentException("rate must be >= 0, was " + rateMicrosPerHour);
        }
    }
}
