package dev.gpucloud.contracts.tracing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** One span as a span log holds it ({@link SpanLogExporter} writes the lines). */
public record LoggedSpan(String traceId, String spanId, String parentSpanId, String name, String kind, String service,
        Instant start, Instant end, String status, Map<String, String> attributes) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public Duration duration() {
        return Duration.between(start, end);
    }

    public String attribute(String key) {
        return attributes.get(key);
    }

    /** What a set of span logs held: the spans read, the files read, and how many lines could not be read. */
    public record Read(List<LoggedSpan> spans, List<Path> files, int unreadable) {
    }

    /**
     * Reads a span log, or every span log ({@code *.jsonl} and their rolled {@code *.jsonl.1}) in a folder. A line
     * that is not a span (a half-written last line, a file edited by hand) is counted, not fatal.
     */
    public static Read read(Path fileOrFolder) {
        List<Path> files = new ArrayList<>();
        try {
            if (Files.isDirectory(fileOrFolder)) {
                try (Stream<Path> listing = Files.list(fileOrFolder)) {
                    listing.filter(p -> p.getFileName().toString().matches(".*\\.jsonl(\\.1)?")).sorted()
                            .forEach(files::add);
                }
            } else if (Files.isRegularFile(fileOrFolder)) {
                files.add(fileOrFolder);
            } else {
                throw new IllegalArgumentException("no span log at " + fileOrFolder);
            }
            List<LoggedSpan> spans = new ArrayList<>();
            int unreadable = 0;
            for (Path file : files) {
                for (String line : Files.readAllLines(file)) {
                    if (line.isBlank()) {
                        continue;
                    }
                    LoggedSpan span = parse(line);
                    if (span == null) {
                        unreadable++;
                    } else {
                        spans.add(span);
                    }
                }
            }
            return new Read(spans, files, unreadable);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the span log " + fileOrFolder + ": " + e.getMessage(), e);
        }
    }

    /** One line of a span log; null when it is not one. */
    static LoggedSpan parse(String line) {
        try {
            JsonNode node = JSON.readTree(line);
            if (node == null || !node.isObject() || !node.path("trace_id").isTextual() || !node.path("span_id").isTextual()
                    || !node.path("start").isTextual() || !node.path("end").isTextual()) {
                return null;
            }
            Map<String, String> attributes = new LinkedHashMap<>();
            node.path("attributes").fields().forEachRemaining(e -> attributes.put(e.getKey(), e.getValue().asText()));
            return new LoggedSpan(node.get("trace_id").asText(), node.get("span_id").asText(),
                    node.hasNonNull("parent_span_id") ? node.get("parent_span_id").asText() : null,
                    node.path("name").asText(""), node.path("kind").asText("INTERNAL"),
                    node.path("service").asText("unknown"), Instant.parse(node.get("start").asText()),
                    Instant.parse(node.get("end").asText()), node.path("status").asText("UNSET"), Map.copyOf(attributes));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
