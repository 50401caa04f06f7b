package dev.gpucloud.billing.rest;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The months a tenant has usage or an invoice in, oldest first. */
@Schema(name = "InvoiceMonths", description = "The months (UTC, YYYY-MM) in which a tenant has usage or an invoice, "
        + "oldest first, and which of them are closed")
public record InvoiceMonthsView(
        @Schema(example = "acme") String tenant,
        @Schema(example = "[\"2025-05\", \"2025-06\"]") List<String> months,
        @Schema(description = "The months whose invoices are CLOSED", example = "[\"2025-05\"]") List<String> closed) {
}
