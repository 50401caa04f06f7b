package dev.gpucloud.contracts.tracing;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Collection;

/**
 * Writes finished spans to a file, one JSON object a line ({@link LoggedSpan} reads them back): the local stack's
 * traces, which {@code ./gpucloud trace JOB} shows without a collector. The file is rolled to {@code FILE.1} when it
 * passes {@code maxBytes}, so the two together never hold much more than twice that.
 */
public final class SpanLogExporter implements SpanExporter {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AttributeKey<String> SERVICE = AttributeKey.stringKey("service.name");

    private final Path file;
    private final long maxBytes;
    private OutputStream out;
    private long written;

    /** Appends to {@code file}, creating it and its folder; fails at once, naming the file, when it cannot. */
    public SpanLogExporter(Path file, long maxBytes) {
        this.file = file.toAbsolutePath();
        this.maxBytes = maxBytes;
        try {
            Files.createDirectories(this.file.getParent());
            open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the span log " + this.file + ": " + e.getMessage(), e);
        }
    }

    private void open() throws IOException {
        out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        written = Files.size(file);
    }

    @Override
    public synchronized CompletableResultCode export(Collection<SpanData> spans) {
        if (out == null) {
            return CompletableResultCode.ofFailure();
        }
        try {
            for (SpanData span : spans) {
                byte[] line = line(span);
                out.write(line);
                written += line.length;
            }
            out.flush();
            if (written > maxBytes) {
                out.close();
                Files.move(file, file.resolveSibling(file.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
                open();
            }
            return CompletableResultCode.ofSuccess();
        } catch (IOException e) {
            return CompletableResultCode.ofFailure();
        }
    }

    /** One span as its line of the log, newline included. */
    static byte[] line(SpanData span) throws IOException {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream(512);
        try (JsonGenerator json = JSON.getFactory().createGenerator(buffer)) {
            json.writeStartObject();
            json.writeStringField("trace_id", span.getTraceId());
            json.writeStringField("span_id", span.getSpanId());
            if (span.getParentSpanContext().isValid()) {
                json.writeStringField("parent_span_id", span.getParentSpanId());
            }
            json.writeStringField("name", span.getName());
            json.writeStringField("kind", span.getKind().name());
            String service = span.getResource().getAttribute(SERVICE);
            json.writeStringField("service", service == null ? "unknown" : service);
            json.writeStringField("start", instant(span.getStartEpochNanos()).toString());
            json.writeStringField("end", instant(span.getEndEpochNanos()).toString());
            json.writeStringField("status", span.getStatus().getStatusCode().name());
            if (!span.getStatus().getDescription().isEmpty()) {
                json.writeStringField("status_message", span.getStatus().getDescription());
            }
            json.writeObjectFieldStart("attributes");
            writeAttributes(json, span.getAttributes());
            json.writeEndObject();
            json.writeEndObject();
        }
        buffer.write('\n');
        return buffer.toByteArray();
    }

    private static void writeAttributes(JsonGenerator json, Attributes attributes) {
        attributes.forEach((key, value) -> {
            try {
                json.writeStringField(key.getKey(), String.valueOf(value));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static Instant instant(long epochNanos) {
        return Instant.ofEpochSecond(0, epochNanos);
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess(); // each export is flushed before it returns
    }

    @Override
    public synchronized CompletableResultCode shutdown() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                return CompletableResultCode.ofFailure();
            } finally {
                out = null;
            }
        }
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public String toString() {
        return "SpanLogExporter{" + file + "}";
    }
}
