package dev.gpucloud.billing.fold.advisor;

/**
 * The best monthly commitment for one SKU: {@code hours} SKU-hours a month at {@code reservedMicrosPerHour},
 * chosen over {@code months} months of its (not spot-tolerant) usage, where it would have cost
 * {@code historyCostMicros} against {@code historyOnDemandMicros} without one.
 */
public record CommitmentAdvice(
        String sku,
        long hours,
        long reservedMicrosPerHour,
        long onDemandMicrosPerHour,
        long usedSecondsThisMonth,
        int months,
        long historyOnDemandMicros,
        long historyCostMicros) {
}
