package dev.gpucloud.scheduler.service.config;

import dev.gpucloud.contracts.tracing.TraceExport;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Where this service's finished spans go (docs/operations.md, "Traces"): quarkus-opentelemetry hands them to this
 * bean, which writes a span log (gpucloud.tracing.span-log) and/or posts them to a collector
 * (gpucloud.tracing.otlp-endpoint), or drops them where neither is set.
 */
@Singleton
public class TraceExporter {

    @Produces
    @Singleton
    SpanExporter spanExporter(@ConfigProperty(name = "gpucloud.tracing.span-log") Optional<Path> spanLog,
            @ConfigProperty(name = "gpucloud.tracing.otlp-endpoint") Optional<URI> otlpEndpoint) {
        return TraceExport.exporter(spanLog, otlpEndpoint);
    }
}
