package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gpucloud.billing.fold.AdjustmentLine;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** An adjustment as the API shows it. */
@Schema(name = "AdjustmentLine", description = "A correction of a CLOSED month, billed on this invoice; the closed "
        + "invoice itself never changes")
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
        @JsonInclude(JsonInclude.Include.NON_NULL) String rateFrom) {

    static AdjustmentLineView of(AdjustmentLine line) {
        return new AdjustmentLineView(line.forMonth().toString(), line.reason(), line.jobId(), line.sku(),
                line.capacityType().name(), line.seconds(), line.rateMicrosPerHour(), line.amountMicros(), line.flag(),
                line.rateFrom() == null ? null : line.rateFrom().toString());
    }
}
