package dev.gpucloud.contracts.events;

import java.util.List;
import java.util.Map;

/** Field checks for the compact constructors of event payloads; every failure names its field. */
public final class Require {

    private Require() {
    }

    /** A field that must be present. */
    public static <T> T present(T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException("missing required field '" + field + "'");
        }
        return value;
    }

    /** A text field that must be present and not blank. */
    public static String text(String value, String field) {
        present(value, field);
        if (value.isBlank()) {
            throw new IllegalArgumentException("field '" + field + "' must not be blank");
        }
        return value;
    }

    public static int atLeast(int value, int min, String field) {
        if (value < min) {
            throw new IllegalArgumentException("field '" + field + "' must be >= " + min + ", was " + value);
        }
        return value;
    }

    public static long atLeast(long value, long min, String field) {
        if (value < min) {
            throw new IllegalArgumentException("field '" + field + "' must be >= " + min + ", was " + value);
        }
        return value;
    }

    public static double between(double value, double min, double max, String field) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(
                    "field '" + field + "' must be within [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    /** An optional list: absent becomes empty, the copy is immutable, and no element is null. */
    public static <T> List<T> list(List<T> value, String field) {
        if (value == null) {
            return List.of();
        }
        for (T element : value) {
            if (element == null) {
                throw new IllegalArgumentException("field '" + field + "' must not contain null");
            }
        }
        return List.copyOf(value);
    }

    /** An optional map: absent becomes empty, and the copy is immutable. */
    public static <K, V> Map<K, V> map(Map<K, V> value, String field) {
        if (value == null) {
            return Map.of();
        }
        try {
            return Map.copyOf(value);
        } catch (NullPointerException e) {
            throw new IllegalArgumentException("field '" + field + "' must not contain null keys or values");
        }
    }
}
