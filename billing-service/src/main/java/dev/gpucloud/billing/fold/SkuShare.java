package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.geometry.MigProfileName;
import java.math.BigInteger;
import java.util.Optional;

/**
 * What part of its parent GPU one SKU is, as a fraction: a whole GPU is 1, a MIG slice is its compute
 * slices over the GPU's (1g.10gb on a 7-slice H100 is 1/7, 1g.6gb on a 4-slice A30 1/4), a fraction is
 * milliGpu/1000. The profile's compute slices come from its name, read by gpu-geometry.
 */
public record SkuShare(long numerator, long denominator) {

    public SkuShare {
        if (numerator < 1 || denominator < 1 || numerator > denominator) {
            throw new IllegalArgumentException("share must be within (0, 1], was " + numerator + "/" + denominator);
        }
        long gcd = BigInteger.valueOf(numerator).gcd(BigInteger.valueOf(denominator)).longValueExact();
        numerator /= gcd;
        denominator /= gcd;
    }

    public static final SkuShare WHOLE = new SkuShare(1, 1);

    /**
     * The share of {@code sku} on a GPU with {@code migSlices} compute slices; empty when the MIG profile
     * is not a MIG profile name ({@code <n>g.<m>gb}, maybe {@code +me}) or asks for more slices than the GPU has.
     */
    public static Optional<SkuShare> of(Sku sku, int migSlices) {
        if (sku.migProfile() != null) {
            Optional<MigProfileName> name = MigProfileName.tryParse(sku.migProfile());
            if (name.isEmpty()) {
                return Optional.empty();
            }
            int slices = name.get().computeSlices();
            return slices <= migSlices ? Optional.of(new SkuShare(slices, migSlices)) : Optional.empty();
        }
        return Optional.of(new SkuShare(sku.milliGpu(), Sku.WHOLE_GPU));
    }

    @Override
    public String toString() {
        return numerator + "/" + denominator;
    }
}
