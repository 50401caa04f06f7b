package dev.gpucloud.scheduler.sim.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The trace formats the loaders read, recognised by the columns of a file's header. */
public enum TraceFormat {
    PHILLY(PhillyTraceLoader.COLUMNS),
    MURI(MuriTraceLoader.COLUMNS),
    OPENB_NODES(OpenbLoader.NODE_COLUMNS),
    OPENB_PODS(OpenbLoader.POD_COLUMNS);

    private final List<String> columns;

    TraceFormat(List<String> columns) {
        this.columns = columns;
    }

    /** The columns a file of this format must have. */
    public List<String> columns() {
        return columns;
    }

    /** The format whose columns the file's header has; fails naming the file if none or if it is empty. */
    public static TraceFormat detect(Path path) {
        String file = CsvFile.label(path);
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            int number = 0;
            while ((line = reader.readLine()) != null) {
                number++;
                if (number == 1 && line.startsWith("\uFEFF")) {
                    line = line.substring(1);
                }
                if (line.isBlank()) {
                    continue;
                }
                Set<String> header = new HashSet<>();
                for (String name : CsvFile.split(file, number, line)) {
                    header.add(name.strip());
                }
                for (TraceFormat format : values()) {
                    if (header.containsAll(format.columns)) {
                        return format;
                    }
                }
                throw new TraceFormatException(file, number, null,
                        "header matches no known trace format (Philly, Muri, openb nodes, openb pods)");
            }
            throw new TraceFormatException(file, 0, null, "file is empty; expected a header row");
        } catch (NoSuchFileException e) {
            throw new TraceFormatException(file, 0, null, "no such file (" + path.toAbsolutePath() + ")");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }
}
