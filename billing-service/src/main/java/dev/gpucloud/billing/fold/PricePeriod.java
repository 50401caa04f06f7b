package dev.gpucloud.billing.fold;

import java.util.Objects;

/** A span of time in which one rate of a SKU and capacity type is in force. */
public record PricePeriod(Interval span, SkuRate rate) {

    public PricePeriod {
        Objects.requireNonNull(span, "span");
        Objects.requireNonNull(rate, "rate");
    }
}
