package dev.gpucloud.scheduler.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Streams a comma-separated file with a header row, one line at a time, as the trace loaders need it.
 * The header names the columns; a file may have more columns than a loader asks for, in any order.
 * Lines may end in LF or CRLF; blank lines (such as a trailing one) are skipped but still counted for
 * line numbers; a UTF-8 byte-order mark is ignored; with {@code comments}, lines starting with '#' are
 * skipped too. A field may be double-quoted to hold commas, with "" for a quote; a field cannot span
 * lines.
 */
public final class CsvFile {

    /** Turns one row into a record, throwing {@link TraceFormatException} (through {@link CsvRow}) if it is malformed. */
    @FunctionalInterface
    public interface RowParser<T> {
        T parse(CsvRow row);
    }

    private CsvFile() {
    }

    /**
     * Reads every data row of {@code path} into {@code sink}, in file order. In STRICT mode the first
     * malformed row throws; in LENIENT mode it is skipped and counted in the returned result.
     */
    public static <T> Loaded<Void> read(Path path, List<String> requiredColumns, boolean comments, ErrorMode mode,
            RowParser<T> parser, Consumer<T> sink) {
        String file = label(path);
        int skipped = 0;
        List<String> problems = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            int lineNumber = 0;
            Map<String, Integer> columns = null;
            String line;
            while ((line = reader.readLine()) != null) {
                lineNumber++;
                if (lineNumber == 1 && line.startsWith("\uFEFF")) {
                    line = line.substring(1);
                }
                if (line.isBlank() || (comments && line.stripLeading().startsWith("#"))) {
                    continue;
                }
                if (columns == null) {
                    columns = header(file, lineNumber, line, requiredColumns);
                    continue;
                }
                try {
                    List<String> fields = split(file, lineNumber, line);
                    if (fields.size() != columns.size()) {
                        throw new TraceFormatException(file, lineNumber, null,
                                "row has " + fields.size() + " fields, the header has " + columns.size());
                    }
                    sink.accept(parser.parse(new CsvRow(file, lineNumber, columns, fields)));
                } catch (TraceFormatException e) {
                    if (mode == ErrorMode.STRICT) {
                        throw e;
                    }
                    skipped++;
                    if (problems.size() < Loaded.MAX_PROBLEMS) {
                        problems.add(e.getMessage());
                    }
                }
            }
            if (columns == null) {
                throw new TraceFormatException(file, 0, null,
                        "file is empty; expected a header row with columns " + String.join(", ", requiredColumns));
            }
        } catch (NoSuchFileException e) {
            throw new TraceFormatException(file, 0, null, "no such file (" + path.toAbsolutePath() + ")");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
        return new Loaded<>(file, List.of(), skipped, problems);
    }

    /** The name used in messages: the file's own name, not its whole path. */
    public static String label(Path path) {
        Path name = path.getFileName();
        return name == null ? path.toString() : name.toString();
    }

    /** The header's columns, by name, in the order they appear; after a BOM and trimming. */
    private static Map<String, Integer> header(String file, int lineNumber, String line, List<String> required) {
        List<String> names = split(file, lineNumber, line);
        Map<String, Integer> columns = new HashMap<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i).strip();
            if (columns.putIfAbsent(name, i) != null) {
                throw new TraceFormatException(file, lineNumber, name, "appears twice in the header");
            }
        }
        for (String column : required) {
            if (!columns.containsKey(column)) {
                throw new TraceFormatException(file, lineNumber, column,
                        "missing from the header (found: " + CsvRow.clip(line.strip()) + ")");
            }
        }
        return columns;
    }

    /** Splits one line into fields, honouring double quotes. */
    static List<String> split(String file, int lineNumber, String line) {
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
                        field.append('"');
                        i++;
                    } else {
                        quoted = false;
                    }
                } else {
                    field.append(c);
                }
            } else if (c == ',') {
                fields.add(field.toString());
                field.setLength(0);
            } else if (c == '"' && field.toString().isBlank()) {
                field.setLength(0);
                quoted = true;
            } else {
                field.append(c);
            }
            i++;
        }
        if (quoted) {
            throw new TraceFormatException(file, lineNumber, null, "a quoted field is not closed");
        }
        fields.add(field.toString());
        return fields;
    }
}
