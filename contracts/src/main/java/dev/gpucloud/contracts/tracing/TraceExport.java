package dev.gpucloud.contracts.tracing;

import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where a service's finished spans go: to a span log ({@link SpanLogExporter}, the local stack's) and to an
 * OpenTelemetry collector over OTLP/HTTP, each only where configured; nowhere when neither is. Tracing itself stays
 * on either way: the context still travels on every record, so a service that does export shows its part of a trace.
 */
public final class TraceExport {

    /** The span log is rolled at this size (its one older file kept beside it). */
    public static final long SPAN_LOG_MAX_BYTES = 64L * 1024 * 1024;

    private TraceExport() {
    }

    /**
     * The exporter for {@code spanLog} and {@code otlpEndpoint}; {@code otlpEndpoint} is the collector's OTLP/HTTP
     * address ({@code http://collector:4318}, to which {@code /v1/traces} is added when it names no path).
     */
    public static SpanExporter exporter(Optional<Path> spanLog, Optional<URI> otlpEndpoint) {
        List<SpanExporter> exporters = new ArrayList<>();
        spanLog.ifPresent(path -> exporters.add(new SpanLogExporter(path, SPAN_LOG_MAX_BYTES)));
        otlpEndpoint.ifPresent(uri -> exporters.add(OtlpHttpSpanExporter.builder()
                .setEndpoint(tracesEndpoint(uri).toString())
                .setTimeout(Duration.ofSeconds(10))
                .build()));
        return SpanExporter.composite(exporters);
    }

    /** {@code endpoint} as the URL spans are posted to: the OTLP/HTTP path added where it has none. */
    static URI tracesEndpoint(URI endpoint) {
        String scheme = endpoint.getScheme();
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || endpoint.getHost() == null) {
            throw new IllegalArgumentException("gpucloud.tracing.otlp-endpoint must be an http(s) URL of a collector's"
                    + " OTLP/HTTP receiver (such as http://otel-collector:4318), not '" + endpoint + "'");
        }
        String path = endpoint.getPath();
        return path == null || path.isEmpty() || path.equals("/") ? endpoint.resolve("/v1/traces") : endpoint;
    }
}
