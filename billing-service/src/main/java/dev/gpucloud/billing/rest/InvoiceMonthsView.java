package dev.gpucloud.billing.rest;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The months a tenant has usage in, oldest first. */
@Schema(name = "InvoiceMonths", description = "The months (UTC, YYYY-MM) in which a tenant has usage, oldest first")
public record InvoiceMonthsView(
        @Schema(example = "acme") String tenant,
        @Schema(example = "[\"2025-05\", \"2025-06\"]") List<String> months) {
}
