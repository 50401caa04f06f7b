package dev.gpucloud.agent.nvml;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the output of {@code nvidia-smi --query-gpu=<FIELDS> --format=csv,noheader,nounits}: one
 * GPU a line, fields separated by ", ". "[N/A]", "N/A" and "[Not Supported]" read as null; a line
 * with the wrong number of fields, a missing index, UUID or name, or a number that is not one is
 * skipped and reported with its line number.
 */
public final class NvidiaSmiCsv {

    /** The fields queried, in order. */
    public static final String FIELDS = "index,uuid,name,pci.bus_id,memory.total,memory.used,memory.free,"
            + "utilization.gpu,utilization.memory,temperature.gpu,power.draw,clocks.sm,clocks.mem";

    private static final int FIELD_COUNT = FIELDS.split(",").length;

    private NvidiaSmiCsv() {
    }

    /** The GPUs read, and one problem a skipped line. */
    public static Parsed parse(String output) {
        List<Row> rows = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String[] lines = output.split("\r?\n");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.isBlank()) {
                continue;
            }
            int lineNumber = i + 1;
            String[] fields = line.split(",", -1);
            if (fields.length != FIELD_COUNT) {
                problems.add("line " + lineNumber + ": expected " + FIELD_COUNT + " fields, got " + fields.length
                        + ": " + abbreviate(line));
                continue;
            }
            try {
                Integer index = integer(fields[0], "index");
                String uuid = text(fields[1]);
                String name = text(fields[2]);
                if (index == null || index < 0 || uuid == null || name == null) {
                    throw new IllegalArgumentException("index, uuid and name are required");
                }
                rows.add(new Row(index, uuid, name, text(fields[3]), longValue(fields[4], "memory.total"),
                        longValue(fields[5], "memory.used"), longValue(fields[6], "memory.free"),
                        decimal(fields[7], "utilization.gpu"), decimal(fields[8], "utilization.memory"),
                        integer(fields[9], "temperature.gpu"), decimal(fields[10], "power.draw"),
                        integer(fields[11], "clocks.sm"), integer(fields[12], "clocks.mem")));
            } catch (IllegalArgumentException e) {
                problems.add("line " + lineNumber + ": " + e.getMessage() + ": " + abbreviate(line));
            }
        }
        return new Parsed(rows, problems);
    }

    private static String text(String field) {
        String value = field.strip();
        if (value.isEmpty() || isMissing(value)) {
            return null;
        }
        return value;
    }

    private static boolean isMissing(String value) {
        String v = value.toLowerCase(Locale.ROOT);
        return v.equals("[n/a]") || v.equals("n/a") || v.equals("[not supported]") || v.equals("[unknown error]")
                || v.equals("[insufficient permissions]") || v.equals("[gpu is lost]");
    }

    private static Integer integer(String field, String name) {
        Double value = decimal(field, name);
        return value == null ? null : (int) Math.round(value);
    }

    private static Long longValue(String field, String name) {
        Double value = decimal(field, name);
        return value == null ? null : Math.round(value);
    }

    private static Double decimal(String field, String name) {
        String value = text(field);
        if (value == null) {
            return null;
        }
        try {
            double parsed = Double.parseDouble(value);
            if (!Double.isFinite(parsed)) {
                throw new NumberFormatException();
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " is not a number (" + abbreviate(value) + ")");
        }
    }

    private static String abbreviate(String text) {
        String clean = text.codePoints().map(c -> c >= 0x20 && c < 0x7f ? c : '?')
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
        return clean.length() <= 120 ? clean : clean.substring(0, 117) + "...";
    }

    /** One GPU's line: MiB, percent, degrees C, watts, MHz; null where nvidia-smi had no value. */
    public record Row(int index, String uuid, String name, String pciBusId, Long memoryTotalMib, Long memoryUsedMib,
            Long memoryFreeMib, Double utilizationGpu, Double utilizationMemory, Integer temperatureC,
            Double powerWatts, Integer smClockMhz, Integer memClockMhz) {
    }

    /** The rows read and the problems found, one a skipped line. */
    public record Parsed(List<Row> rows, List<String> problems) {
        public Parsed {
            rows = List.copyOf(rows);
            problems = List.copyOf(problems);
        }
    }
}
