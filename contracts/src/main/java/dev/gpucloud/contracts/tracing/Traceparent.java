package dev.gpucloud.contracts.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A span's place in its trace as one W3C {@code traceparent} string ("00-TRACE-SPAN-01"): what a row stores so that
 * work done later, on another thread or after a restart (a job placed minutes after it was submitted), continues
 * the trace the row was written in.
 */
public final class Traceparent {

    /** The W3C Trace Context header: the same name on gRPC metadata, HTTP and Kafka records. */
    public static final String HEADER = "traceparent";

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final TextMapSetter<Map<String, String>> INTO_MAP = Map::put;
    private static final TextMapGetter<Map<String, String>> FROM_MAP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private Traceparent() {
    }

    /** The traceparent of the span current in {@code context}; null when it holds none (tracing off, or no trace). */
    public static String of(Context context) {
        if (!Span.fromContext(context).getSpanContext().isValid()) {
            return null;
        }
        Map<String, String> carrier = new HashMap<>();
        W3C.inject(context, carrier, INTO_MAP);
        return carrier.get(HEADER);
    }

    /** The traceparent of {@code span}; null for an invalid one. */
    public static String of(Span span) {
        return of(Context.root().with(span));
    }

    /**
     * The context whose parent is the span {@code traceparent} names: what a span started later is a child of. The
     * root context for null, blank or malformed text (a malformed header starts a new trace, it never fails work).
     */
    public static Context parent(String traceparent) {
        if (traceparent == null || traceparent.isBlank()) {
            return Context.root();
        }
        return W3C.extract(Context.root(), Map.of(HEADER, traceparent.strip()), FROM_MAP);
    }

    /** The trace id {@code traceparent} names, or null when it names none. */
    public static String traceId(String traceparent) {
        SpanContext span = Span.fromContext(parent(traceparent)).getSpanContext();
        return span.isValid() ? span.getTraceId() : null;
    }

    /** The header names the propagator reads and writes. */
    public static List<String> headers() {
        return List.copyOf(W3C.fields());
    }
}
