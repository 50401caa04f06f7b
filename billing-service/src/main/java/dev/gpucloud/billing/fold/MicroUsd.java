package dev.gpucloud.billing.fold;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** Money is a long count of micro-USD; rounding, where it must happen, is half-even (banker's). */
public final class MicroUsd {

    public static final long PER_USD = 1_000_000;
    private static final long SECONDS_PER_HOUR = 3600;

    private MicroUsd() {
    }

    /** A price in USD (e.g. "2.745") as micro-USD; more than six decimals is an error, not a rounding. */
    public static long fromUsd(String usd) {
        return new BigDecimal(usd).movePointRight(6).longValueExact();
    }

    /** What {@code seconds} cost at {@code microsPerHour}, rounded half-even to the micro-USD. */
    public static long forSeconds(long seconds, long microsPerHour) {
        return BigDecimal.valueOf(seconds).multiply(BigDecimal.valueOf(microsPerHour))
                .divide(BigDecimal.valueOf(SECONDS_PER_HOUR), 0, RoundingMode.HALF_EVEN)
                .longValueExact();
    }

    /** {@code micros * share}, rounded half-even to the micro-USD. */
    public static long scale(long micros, SkuShare share) {
        return BigDecimal.valueOf(micros).multiply(BigDecimal.valueOf(share.numerator()))
                .divide(BigDecimal.valueOf(share.denominator()), 0, RoundingMode.HALF_EVEN)
                .longValueExact();
    }

    /** Micro-USD as a USD amount rounded half-even to cents, e.g. "12.35". */
    public static String toUsdCents(long micros) {
        return BigDecimal.valueOf(micros, 6).setScale(2, RoundingMode.HALF_EVEN).toPlainString();
    }
}
