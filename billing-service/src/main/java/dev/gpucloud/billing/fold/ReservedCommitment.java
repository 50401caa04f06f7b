package dev.gpucloud.billing.fold;

import java.time.YearMonth;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A tenant's purchase of {@code hoursPerMonth} SKU-hours of one SKU in each month from {@code firstMonth} to
 * {@code lastMonth} (inclusive) at {@code microsPerHour}: the first committed hours of the tenant's usage of
 * that SKU in a month are billed at this rate, usage beyond them at the on-demand price, and committed hours
 * left unused are billed all the same (a commitment is paid whether used or not).
 */
public record ReservedCommitment(String tenant, String sku, long hoursPerMonth, long microsPerHour,
        YearMonth firstMonth, YearMonth lastMonth) {

    /** The job id of the line that bills a month's unused committed hours. */
    public static final String UNUSED = "(unused commitment)";

    public ReservedCommitment {
        if (tenant == null || tenant.isBlank()) {
            throw new IllegalArgumentException("tenant of a commitment must not be blank");
        }
        if (sku == null || sku.isBlank()) {
            throw new IllegalArgumentException("SKU of a commitment must not be blank");
        }
        Objects.requireNonNull(firstMonth, "firstMonth");
        Objects.requireNonNull(lastMonth, "lastMonth");
        if (hoursPerMonth < 1) {
            throw new IllegalArgumentException("hours per month of a commitment must be >= 1, was " + hoursPerMonth);
        }
        if (microsPerHour < 0) {
            throw new IllegalArgumentException("rate of a commitment must be >= 0, was " + microsPerHour);
        }
        if (lastMonth.isBefore(firstMonth)) {
            throw new IllegalArgumentException("commitment ends (" + lastMonth + ") before it starts (" + firstMonth + ")");
        }
    }

    /** True when this commitment is the tenant's for that SKU in that month. */
    public boolean covers(String tenant, String sku, YearMonth month) {
        return this.tenant.equals(tenant) && this.sku.equals(sku) && !month.isBefore(firstMonth)
                && !month.isAfter(lastMonth);
    }

    /** True when both commit the same tenant and SKU in a common month. */
    public boolean overlaps(ReservedCommitment other) {
        return tenant.equals(other.tenant) && sku.equals(other.sku) && !other.lastMonth.isBefore(firstMonth)
                && !lastMonth.isBefore(other.firstMonth);
    }

    /** The committed SKU-seconds of one month. */
    public long secondsPerMonth() {
        return Math.multiplyExact(hoursPerMonth, 3600L);
    }

    /**
     * Commitments, comma-separated or one a line, each {@code TENANT/SKU/FIRST..LAST=HOURS@MICROS}, e.g.
     * {@code acme/A100-SXM4-40GB/2025-06..2026-05=100@1840000} (100 SKU-hours a month at 1.84 USD per hour);
     * {@code /FIRST} alone is a one-month commitment. # starts a comment that runs to the end of its line;
     * anything else is an error that quotes the entry.
     */
    public static List<ReservedCommitment> parse(String entries) {
        List<ReservedCommitment> result = new ArrayList<>();
        for (String line : entries.split("\\R")) {
            int comment = line.indexOf('#');
            for (String raw : (comment < 0 ? line : line.substring(0, comment)).split(",")) {
                String entry = raw.strip();
                if (!entry.isEmpty()) {
                    result.add(parseOne(entry));
                }
            }
        }
        return List.copyOf(result);
    }

    private static ReservedCommitment parseOne(String entry) {
        int equals = entry.indexOf('=');
        int firstSlash = entry.indexOf('/');
        int lastSlash = equals < 0 ? -1 : entry.lastIndexOf('/', equals);
        int at = equals < 0 ? -1 : entry.indexOf('@', equals);
        if (equals < 0 || at < 0 || firstSlash <= 0 || lastSlash <= firstSlash + 1) {
            throw new IllegalArgumentException("commitment '" + entry + "' is not TENANT/SKU/FIRST..LAST=HOURS@MICROS");
        }
        String tenant = entry.substring(0, firstSlash).strip();
        String sku = entry.substring(firstSlash + 1, lastSlash).strip();
        String months = entry.substring(lastSlash + 1, equals).strip();
        try {
            int range = months.indexOf("..");
            YearMonth first = YearMonth.parse(range < 0 ? months : months.substring(0, range).strip());
            YearMonth last = range < 0 ? first : YearMonth.parse(months.substring(range + 2).strip());
            long hours = Long.parseLong(entry.substring(equals + 1, at).strip());
            long micros = Long.parseLong(entry.substring(at + 1).strip());
            return new ReservedCommitment(tenant, sku, hours, micros, first, last);
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException("commitment '" + entry + "': months must be YYYY-MM..YYYY-MM, hours "
                    + "and micro-USD whole numbers");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("commitment '" + entry + "': " + e.getMessage(), e);
        }
    }
}
