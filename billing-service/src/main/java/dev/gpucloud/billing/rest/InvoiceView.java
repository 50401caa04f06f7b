package dev.gpucloud.billing.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.gpucloud.billing.fold.InvoiceStatement;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A tenant's invoice for one month as the API shows it. */
@Schema(name = "Invoice", description = "A tenant's charges for one calendar month (UTC)")
public record InvoiceView(
        @Schema(example = "acme") String tenant,
        @Schema(example = "2025-06") String month,
        @Schema(description = "OPEN: priced from the stored usage when read; CLOSED: frozen, never changes",
                enumeration = {"OPEN", "CLOSED"}, example = "OPEN") String status,
        @Schema(description = "When the invoice closed; absent while OPEN", example = "2025-07-04T00:00:12Z")
        @JsonInclude(JsonInclude.Include.NON_NULL) String closedAt,
        @Schema(example = "USD") String currency,
        List<InvoiceLineView> lines,
        @Schema(description = "Corrections of earlier, closed months carried by this invoice, then the adjustments "
                + "finance booked on it by hand (those with adjustmentId)")
        List<AdjustmentLineView> adjustments,
        @Schema(description = "Sum of the lines' and adjustments' amounts in micro-USD", example = "99125")
        long totalMicros,
        @Schema(description = "The total in USD, rounded half-even to cents", example = "0.10") String total) {

    public static final String OPEN = "OPEN";
    public static final String CLOSED = "CLOSED";

    static InvoiceView of(InvoiceStatement statement) {
        return new InvoiceView(statement.tenant(), statement.month().toString(), statement.status(),
                statement.closedAt() == null ? null : statement.closedAt().toString(), "USD",
                statement.lines().stream().map(InvoiceLineView::of).toList(),
                java.util.stream.Stream.concat(statement.adjustments().stream().map(AdjustmentLineView::of),
                        statement.manualAdjustments().stream().map(AdjustmentLineView::of)).toList(),
                statement.totalMicros(), statement.totalUsd());
    }
}
