package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import java.time.Instant;
import java.util.Objects;

/** One catalog price: micro-USD per whole-GPU-hour of a model bought as a capacity type, in force from an instant. */
public record PriceEntry(String gpuModel, CapacityType capacityType, Instant effectiveFrom, long microsPerGpuHour) {

    public PriceEntry {
        if (gpuModel == null || gpuModel.isBlank()) {
            throw new IllegalArgumentException("field 'gpuModel' is missing");
        }
        Objects.requireNonNull(capacityType, "capacityType");
        Objects.requireNonNull(effectiveFrom, "effectiveFrom");
        if (microsPerGpuHour < 0) {
            throw new IllegalArgumentException("field 'microsPerGpuHour' must be >= 0, was " + microsPerGpuHour);
        }
    }

    /** This entry applied to {@code catalog}. */
    public PriceCatalog applyTo(PriceCatalog catalog) {
        return catalog.withPrice(gpuModel, capacityType, effectiveFrom, microsPerGpuHour);
    }
}
