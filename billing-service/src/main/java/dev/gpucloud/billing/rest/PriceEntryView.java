package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.PriceEntry;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One catalog price as the API shows it. */
@Schema(name = "PriceEntry", description = "A price per whole-GPU-hour, in force from effectiveFrom until the next "
        + "entry of the same GPU model and capacity type")
public record PriceEntryView(
        @Schema(example = "A100-SXM4-40GB") String gpuModel,
        @Schema(enumeration = {"ON_DEMAND", "SPOT", "RESERVED"}, example = "ON_DEMAND") String capacityType,
        @Schema(example = "2025-07-01T00:00:00Z") String effectiveFrom,
        @Schema(example = "2745000") long microsPerGpuHour,
        @Schema(example = "2.745000") String usdPerGpuHour) {

    static PriceEntryView of(PriceEntry entry) {
        return new PriceEntryView(entry.gpuModel(), entry.capacityType().name(), entry.effectiveFrom().toString(),
                entry.microsPerGpuHour(), java.math.BigDecimal.valueOf(entry.microsPerGpuHour(), 6).toPlainString());
    }

}
