package dev.gpucloud.billing.fold;

/**
 * The price of one SKU-hour in micro-USD. A rate the catalog could not give for this exact SKU carries a
 * {@code flag} that says what was used instead; an invoice shows it, so a fallback price is never silent.
 */
public record SkuRate(long microsPerHour, String flag) {

    public SkuRate {
        if (microsPerHour < 0) {
            throw new IllegalArgumentException("rate must be >= 0, was " + microsPerHour);
        }
        if (flag != null && flag.isBlank()) {
            flag = null;
        }
    }

    public static SkuRate priced(long microsPerHour) {
        return new SkuRate(microsPerHour, null);
    }

    public static SkuRate flagged(long microsPerHour, String why) {
        return new SkuRate(microsPerHour, why);
    }

    /** Prefix of the flag of a held rate. */
    public static final String HELD = "held: ";

    /**
     * No price is known: the usage is shown at rate 0 with the reason, and billed once the catalog prices
     * it (see docs/billing.md), never dropped and never priced from a guess.
     */
    public static SkuRate held(String why) {
        return new SkuRate(0, HELD + why + "; billed once the catalog prices it");
    }

    public boolean isHeld() {
        return flag != null && flag.startsWith(HELD);
    }

    public boolean isFlagged() {
        return flag != null;
    }
}
