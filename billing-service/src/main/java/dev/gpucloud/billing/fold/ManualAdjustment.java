package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;
import java.time.YearMonth;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A correction that finance books by hand on a tenant's open invoice: a credit (negative, e.g. an SLA credit) or
 * a debit, with the reason the tenant reads on the invoice. Unlike the adjustments that correct a closed month's
 * usage ({@link AdjustmentLine}), it has no job, SKU or seconds: it is an amount. It belongs to one month's invoice
 * for good, is counted in that invoice's total once, and is frozen with it when the month closes. The client's
 * idempotency key names it: a retry of the same request finds it instead of booking a second one.
 */
public record ManualAdjustment(long id, String tenant, YearMonth month, long amountMicros, String reason,
        String idempotencyKey, String bookedBy, Instant bookedAt) {

    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._:-]+");

    public ManualAdjustment {
        Tenants.require(tenant, "tenant");
        Objects.requireNonNull(month, "month");
        amount(amountMicros);
        reason(reason);
        idempotencyKey(idempotencyKey);
        if (bookedBy == null || bookedBy.isBlank()) {
            throw new IllegalArgumentException("field 'bookedBy' is required: who booked the adjustment");
        }
        Objects.requireNonNull(bookedAt, "bookedAt");
    }

    /** An amount finance may book: signed micro-USD (negative: a credit), never 0, within the limits table's bound. */
    public static long amount(long micros) {
        if (micros == 0) {
            throw new IllegalArgumentException("field 'amountMicros' must not be 0: a credit is negative, a debit"
                    + " positive (micro-USD)");
        }
        return Check.number(micros, Limits.ADJUSTMENT_AMOUNT, "amountMicros");
    }

    /**
     * A reason as the tenant reads it on the invoice and in the CSV: not blank, within its length, and no control
     * or format character (a line break would split a CSV row for a careless reader; a bidirectional override
     * would make the text read other than it is stored).
     */
    public static String reason(String reason) {
        Check.text(reason, Limits.ADJUSTMENT_REASON, "reason");
        for (int i = 0; i < reason.length(); i++) {
            int type = Character.getType(reason.charAt(i));
            if (type == Character.CONTROL || type == Character.FORMAT || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR) {
                throw new IllegalArgumentException(String.format("field 'reason' must not contain control or format"
                        + " characters, had U+%04X at %d", (int) reason.charAt(i), i));
            }
        }
        return reason;
    }

    /** A client's idempotency key: 1..128 letters, digits, '.', '_', ':' or '-' (a UUID fits). */
    public static String idempotencyKey(String key) {
        Check.text(key, Limits.IDEMPOTENCY_KEY, "Idempotency-Key");
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("header 'Idempotency-Key' must be letters, digits, '.', '_', ':' or"
                    + " '-' (a UUID fits), was '" + Check.clip(key) + "'");
        }
        return key;
    }

    /** The amount in USD, exact (six decimals), e.g. "-12.500000". */
    public String amountUsd() {
        return java.math.BigDecimal.valueOf(amountMicros, 6).toPlainString();
    }
}
