package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gpucloud.billing.fold.AdjustmentLine;
import dev.gpucloud.billing.fold.ManualAdjustment;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * An adjustment as the API shows it: a correction of a closed month's usage, or an adjustment finance booked by
 * hand (an amount with a reason and its {@code adjustmentId}; no job, SKU or seconds of its own).
 */
@Schema(name = "AdjustmentLine", description = "A correction of a CLOSED month, billed on this invoice (the closed "
        + "invoice itself never changes), or, with adjustmentId, a credit or debit that finance booked on this invoice "
        + "by hand: forMonth is then this invoice's month, jobId, sku and capacityType are empty and seconds 0")
public record AdjustmentLineView(
        @Schema(description = "The closed month the usage belongs to", example = "2025-05") String forMonth,
        @Schema(description = "Why the closed month owes this", example = "usage of alloc-1 (job job-7) in "
                + "[2025-05-31T23:00:00Z, 2025-05-31T23:30:00Z) arrived after 2025-05 closed") String reason,
        @Schema(example = "job-7f3a") String jobId,
        @Schema(example = "A100-SXM4-40GB") String sku,
        @Schema(example = "ON_DEMAND") String capacityType,
        @Schema(description = "SKU-seconds added (negative: removed, e.g. held seconds now billed at a rate)",
                example = "1800") long seconds,
        @Schema(example = "2745000") long rateMicrosPerHour,
        @Schema(description = "Micro-USD added (negative: credited)", example = "1372500") long amountMicros,
        @JsonInclude(JsonInclude.Include.NON_NULL) String flag,
        @JsonInclude(JsonInclude.Include.NON_NULL) String rateFrom,
        @Schema(description = "Only on an adjustment finance booked by hand: its id, as POST "
                + "/invoices/{tenant}/adjustments answered it", example = "17")
        @JsonInclude(JsonInclude.Include.NON_NULL) Long adjustmentId) {

    static AdjustmentLineView of(AdjustmentLine line) {
        return new AdjustmentLineView(line.forMonth().toString(), line.reason(), line.jobId(), line.sku(),
                line.capacityType().name(), line.seconds(), line.rateMicrosPerHour(), line.amountMicros(), line.flag(),
                line.rateFrom() == null ? null : line.rateFrom().toString(), null);
    }

    /** A manual adjustment in the same shape, so a reader that adds up {@code adjustments} still gets the total. */
    static AdjustmentLineView of(ManualAdjustment manual) {
        return new AdjustmentLineView(manual.month().toString(), manual.reason(), "", "", "", 0, 0,
                manual.amountMicros(), null, null, manual.id());
    }
}
