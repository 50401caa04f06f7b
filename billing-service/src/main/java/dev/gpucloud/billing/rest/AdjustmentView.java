package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.ManualAdjustment;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A manual adjustment as POST /invoices/{tenant}/adjustments answers it, to finance. */
@Schema(name = "ManualAdjustment", description = "A credit or debit finance booked on one open invoice")
public record AdjustmentView(
        @Schema(example = "17") long id,
        @Schema(example = "acme") String tenant,
        @Schema(description = "The invoice it is on: its month (UTC), OPEN when booked", example = "2025-07")
        String month,
        @Schema(description = "Micro-USD; negative: a credit", example = "-12500000") long amountMicros,
        @Schema(description = "The amount in USD, exact", example = "-12.500000") String amountUsd,
        @Schema(example = "SLA credit: 4 h of downtime on 2025-07-03") String reason,
        @Schema(example = "3f1c2a9e-5b7d-4c1e-9f00-2a6b8d7e1c44") String idempotencyKey,
        @Schema(description = "The subject of the token that booked it", example = "fin") String bookedBy,
        @Schema(example = "2025-07-04T09:12:00Z") String bookedAt,
        @Schema(description = "true: a repeat of an earlier request with this key; this is what that one booked, and "
                + "nothing new was") boolean repeated) {

    static AdjustmentView of(ManualAdjustment adjustment, boolean repeated) {
        return new AdjustmentView(adjustment.id(), adjustment.tenant(), adjustment.month().toString(),
                adjustment.amountMicros(), adjustment.amountUsd(), adjustment.reason(), adjustment.idempotencyKey(),
                adjustment.bookedBy(), adjustment.bookedAt().toString(), repeated);
    }
}
