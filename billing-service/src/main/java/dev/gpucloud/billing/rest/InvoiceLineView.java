package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gpucloud.billing.fold.InvoiceLine;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One invoice line as the API shows it. */
@Schema(name = "InvoiceLine", description = "A job's billed usage of one SKU and capacity type at one rate in the month")
public record InvoiceLineView(
        @Schema(description = "The job; \"(unused commitment)\" on the line that bills a reserved commitment's "
                + "unused hours", example = "job-7f3a") String jobId,
        @Schema(description = "GPU model, MIG slice (model/mig-profile) or GPU fraction (model/<milli>m)",
                example = "A100-SXM4-40GB") String sku,
        @Schema(example = "ON_DEMAND") String capacityType,
        @Schema(description = "Billed SKU-seconds: each allocation's seconds (rounded up, at least the minimum) "
                + "times its units", example = "130") long seconds,
        @Schema(description = "Price of one SKU-hour in micro-USD", example = "2745000") long rateMicrosPerHour,
        @Schema(description = "seconds x rate / 3600, rounded half-even to the micro-USD", example = "99125")
        long amountMicros,
        @Schema(description = "Set when the rate is a fallback (SKU not in the catalog); absent otherwise")
        @JsonInclude(JsonInclude.Include.NON_NULL) String flag,
        @Schema(description = "Set when the catalog changed this SKU's price within the month: the instant (UTC) "
                + "from which this line's rate applies, up to the next line's or the month's end; absent when one "
                + "rate held all month", example = "2025-06-15T00:00:00Z")
        @JsonInclude(JsonInclude.Include.NON_NULL) String rateFrom) {

    static InvoiceLineView of(InvoiceLine line) {
        return new InvoiceLineView(line.jobId(), line.sku(), line.capacityType().name(), line.seconds(),
                line.rateMicrosPerHour(), line.amountMicros(), line.flag(),
                line.rateFrom() == null ? null : line.rateFrom().toString());
    }
}
