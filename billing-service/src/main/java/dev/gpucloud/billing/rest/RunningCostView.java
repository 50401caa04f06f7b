package dev.gpucloud.billing.rest;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The cost so far of the month in progress. */
@Schema(name = "RunningCost", description = "What the tenant's current month (UTC) costs so far")
public record RunningCostView(
        @Schema(example = "acme") String tenant,
        @Schema(example = "2025-06") String month,
        @Schema(example = "OPEN") String status,
        @Schema(description = "When it was priced", example = "2025-06-17T09:30:00Z") String asOf,
        @Schema(description = "Billed SKU-seconds so far", example = "86400") long seconds,
        @Schema(example = "2745000") long totalMicros,
        @Schema(example = "2.75") String total) {
}
