package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.Invoice;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A tenant's invoice for one month as the API shows it. */
@Schema(name = "Invoice", description = "A tenant's charges for one calendar month (UTC)")
public record InvoiceView(
        @Schema(example = "acme") String tenant,
        @Schema(example = "2025-06") String month,
        @Schema(description = "OPEN while usage may still arrive", example = "OPEN") String status,
        @Schema(example = "USD") String currency,
        List<InvoiceLineView> lines,
        @Schema(description = "Sum of the lines' amounts in micro-USD", example = "99125") long totalMicros,
        @Schema(description = "The total in USD, rounded half-even to cents", example = "0.10") String total) {

    /** Invoices stay open in this version; closing a month arrives with the full billing. */
    public static final String OPEN = "OPEN";

    static InvoiceView of(Invoice invoice) {
        return new InvoiceView(invoice.tenant(), invoice.month().toString(), OPEN, "USD",
                invoice.lines().stream().map(InvoiceLineView::of).toList(), invoice.totalMicros(), invoice.totalUsd());
    }
}
