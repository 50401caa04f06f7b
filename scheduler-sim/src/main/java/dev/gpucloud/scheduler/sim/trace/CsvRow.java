package dev.gpucloud.scheduler.sim.trace;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/** One data row of a CSV file, read by column name; every failed read names the file, line and column. */
public final class CsvRow {

    private final String file;
    private final int line;
    private final Map<String, Integer> columns;
    private final List<String> fields;

    CsvRow(String file, int line, Map<String, Integer> columns, List<String> fields) {
        this.file = file;
        this.line = line;
        this.columns = columns;
        this.fields = fields;
    }

    /** The 1-based line number in the file. */
    public int line() {
        return line;
    }

    public String file() {
        return file;
    }

    /** The raw text of a column, trimmed; empty if the field is empty. */
    public String raw(String column) {
        Integer index = columns.get(column);
        if (index == null) {
            throw new IllegalArgumentException("no column '" + column + "' in " + file + " (a loader bug)");
        }
        return fields.get(index).strip();
    }

    /** A non-empty text value. */
    public String text(String column) {
        String value = raw(column);
        if (value.isEmpty()) {
            throw error(column, "is empty");
        }
        return value;
    }

    /** A whole number within [min, max]; "12.0" is accepted as 12, "1.5" is not. */
    public long longValue(String column, long min, long max) {
        BigDecimal number = decimal(column);
        long value;
        try {
            value = number.stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            throw error(column, "'" + raw(column) + "' is not a whole number");
        }
        return inRange(column, value, min, max);
    }

    /** A whole number within [min, max] that fits an int. */
    public int intValue(String column, int min, int max) {
        return (int) longValue(column, min, max);
    }

    /** A decimal number, exact (no binary rounding). */
    public BigDecimal decimal(String column) {
        String value = raw(column);
        if (value.isEmpty()) {
            throw error(column, "is empty, expected a number");
        }
        try {
            return new BigDecimal(value);
        } catch (NumberFormatException e) {
            throw error(column, "'" + clip(value) + "' is not a number");
        }
    }

    /** A decimal number scaled by 10^{@code shift} and rounded to a whole number, e.g. seconds to milliseconds with shift 3. */
    public long scaled(String column, int shift, long min, long max) {
        BigDecimal scaled = decimal(column).movePointRight(shift).setScale(0, java.math.RoundingMode.HALF_UP);
        long value;
        try {
            value = scaled.longValueExact();
        } catch (ArithmeticException e) {
            throw error(column, "'" + raw(column) + "' is too large");
        }
        return inRange(column, value, min, max);
    }

    private long inRange(String column, long value, long min, long max) {
        if (value < min || value > max) {
            String bounds = max >= Integer.MAX_VALUE
                    ? "must be at least " + min
                    : "must be within " + min + ".." + max;
            throw error(column, "'" + raw(column) + "' is out of range (" + bounds + ")");
        }
        return value;
    }

    /** An error about one column of this row. */
    public TraceFormatException error(String column, String problem) {
        return new TraceFormatException(file, line, column, problem);
    }

    /** Text cut to 40 characters for a message. */
    public static String clipped(String text) {
        return clip(text);
    }

    static String clip(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
