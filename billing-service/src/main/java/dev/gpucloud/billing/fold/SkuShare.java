package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.Sku;
import java.math.BigInteger;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What part of its parent GPU one SKU is, as a fraction: a whole GPU is 1, a MIG slice is its compute
 * slices over the GPU's (1g.10gb on a 7-slice H100 is 1/7), a fraction is milliGpu/1000.
 */
public record SkuShare(long numerator, long denominator) {

    private static final Pattern MIG_PROFILE = Pattern.compile("([1-9][0-9]?)g\\.[0-9]+gb(\\+me)?");

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
     * is not of the form {@code <n>g.<m>gb} or asks for more slices than the GPU has.
     */
    public static Optional<SkuShare> of(Sku sku, int migSlices) {
        if (sku.migProfile() != null) {
            Matcher matcher = MIG_PROFILE.matcher(sku.migProfile());
            if (!matcher.matches()) {
                return Optional.empty();
            }
            int slices = Integer.parseInt(matcher.group(1));
            return slices <= migSlices ? Optional.of(new SkuShare(slices, migSlices)) : Optional.empty();
        }
        return Optional.of(new SkuShare(sku.milliGpu(), Sku.WHOLE_GPU));
    }

    @Override
    public String toString() {
        return numerator + "/" + denominator;
    }
}
