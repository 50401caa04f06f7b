package dev.gpucloud.billing.rest;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** What POST /invoices/{tenant}/{month}/close answers: whether this call closed the invoice, and the invoice. */
@Schema(name = "InvoiceClosing", description = "The outcome of closing an invoice, and the frozen invoice")
public record ClosingView(
        @Schema(description = "true: this call closed it; false: it was closed already and nothing changed")
        boolean closedNow,
        @Schema(example = "closed the invoice of acme for 2025-06") String message,
        InvoiceView invoice) {
}
