package dev.gpucloud.contracts.limits;

import java.time.Instant;
import java.util.Collection;
import java.util.Map;

/**
 * The validator every edge shares: each check takes a row of {@link Limits} and the field's name, and a
 * value outside it is an {@link IllegalArgumentException} whose message names the field and shows the value,
 * clipped and with control characters escaped (so a reason never carries a NUL byte or a megabyte).
 */
public final class Check {

    /** Values shown in messages are clipped to this many characters. */
    public static final int SHOWN = 64;

    private Check() {
    }

    /** A required string: present, not blank (when the limit's minimum is at least 1), within the limit. */
    public static String text(String value, Limit limit, String field) {
        if (value == null) {
            throw new IllegalArgumentException("missing required field '" + field + "'");
        }
        if (limit.min() > 0 && value.isBlank()) {
            throw new IllegalArgumentException("field '" + field + "' must not be blank");
        }
        return optionalText(value, limit, field);
    }

    /** An optional string (null passes): within the limit's length, no NUL, no unpaired surrogate. */
    public static String optionalText(String value, Limit limit, String field) {
        if (value == null) {
            return null;
        }
        if (value.length() > limit.max()) {
            throw new IllegalArgumentException("field '" + field + "' must be at most " + limit.max()
                    + " characters, was " + value.length() + " ('" + clip(value) + "')");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\0') {
                throw new IllegalArgumentException("field '" + field + "' must not contain a NUL character (at "
                        + i + ")");
            }
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("field '" + field + "' is not valid Unicode (an unpaired surrogate at "
                        + i + ")");
            }
        }
        return value;
    }

    /** An integer within the limit's range. */
    public static long number(long value, Limit limit, String field) {
        if (value < limit.min() || value > limit.max()) {
            throw new IllegalArgumentException("field '" + field + "' must be within " + limit.min() + ".."
                    + limit.max() + ", was " + value);
        }
        return value;
    }

    /** An int within the limit's range. */
    public static int number(int value, Limit limit, String field) {
        return (int) number((long) value, limit, field);
    }

    /** A list or set with no more entries than the limit allows (and at least its minimum). */
    public static <C extends Collection<?>> C size(C value, Limit limit, String field) {
        int n = value == null ? 0 : value.size();
        if (n < limit.min() || n > limit.max()) {
            throw new IllegalArgumentException("field '" + field + "' must have " + limit.min() + ".." + limit.max()
                    + " entries, had " + n);
        }
        return value;
    }

    /** A map with no more entries than the limit allows. */
    public static <M extends Map<?, ?>> M size(M value, Limit limit, String field) {
        int n = value == null ? 0 : value.size();
        if (n < limit.min() || n > limit.max()) {
            throw new IllegalArgumentException("field '" + field + "' must have " + limit.min() + ".." + limit.max()
                    + " entries, had " + n);
        }
        return value;
    }

    /** A stored time: not before {@link Limits#EPOCH}, before {@link Limits#LATEST}; null passes. */
    public static Instant time(Instant value, String field) {
        if (value != null && (value.isBefore(Limits.EPOCH) || !value.isBefore(Limits.LATEST))) {
            throw new IllegalArgumentException("field '" + field + "' must be within " + Limits.EPOCH + " .. "
                    + Limits.LATEST + ", was " + value);
        }
        return value;
    }

    /** An event's time as a receiver sees it: a stored time, and at most the clock skew ahead of {@code now}. */
    public static Instant eventTime(Instant value, Instant now, String field) {
        time(value, field);
        if (value != null && value.isAfter(now.plus(Limits.EVENT_CLOCK_SKEW))) {
            throw new IllegalArgumentException("field '" + field + "' is in the future: " + value + ", more than "
                    + Limits.EVENT_CLOCK_SKEW.toMinutes() + " min after the receiver's clock (" + now + ")");
        }
        return value;
    }

    /** A deadline at submission: after {@code now} and within {@link Limits#DEADLINE_HORIZON}; null passes. */
    public static Instant deadline(Instant value, Instant now, String field) {
        time(value, field);
        if (value != null && !value.isAfter(now)) {
            throw new IllegalArgumentException("field '" + field + "' must be in the future, was " + value);
        }
        if (value != null && value.isAfter(now.plus(Limits.DEADLINE_HORIZON))) {
            throw new IllegalArgumentException("field '" + field + "' must be within "
                    + Limits.DEADLINE_HORIZON.toDays() + " days from now, was " + value);
        }
        return value;
    }

    /** The longest message a reason (a dead letter's, an error's) carries. */
    public static final int REASON = 400;

    /**
     * A message as a reason may carry it: control characters escaped, at most {@link #REASON} characters (a
     * parser's message may quote a whole value).
     */
    public static String reason(String message) {
        return clipTo(message, REASON);
    }

    /**
     * A value as a message may show it: at most {@link #SHOWN} characters (then "..."), control characters
     * and unpaired surrogates escaped as {@code \\uXXXX}.
     */
    public static String clip(String value) {
        return clipTo(value, SHOWN);
    }

    private static String clipTo(String value, int shown) {
        if (value == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(value.length(), shown) + 8);
        int n = Math.min(value.length(), shown);
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c) || Character.isSurrogate(c) && !(Character.isHighSurrogate(c)
                    && i + 1 < n && Character.isLowSurrogate(value.charAt(i + 1)))
                    && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(value.charAt(i - 1)))) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (value.length() > shown) {
            out.append("...");
        }
        return out.toString();
    }
}
