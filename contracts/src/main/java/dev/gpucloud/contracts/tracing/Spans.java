package dev.gpucloud.contracts.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/**
 * The few ways gpucloud's services start and end their own spans. Their attributes use the log fields' keys
 * ({@code job_id}, {@code tenant}, {@code node_id}, {@code allocation_id}), so a trace and the log lines of the same
 * work are found by the same names.
 */
public final class Spans {

    private Spans() {
    }

    /**
     * Starts a span as a child of {@code parent} (a new trace when it holds no span) with {@code keysAndValues}
     * (key, value, key, value...) as attributes; a null or empty value is left out.
     */
    public static Span child(Tracer tracer, String name, Context parent, SpanKind kind, String... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("attributes come in key, value pairs, got " + keysAndValues.length);
        }
        var builder = tracer.spanBuilder(name).setSpanKind(kind).setParent(parent);
        for (int i = 0; i < keysAndValues.length; i += 2) {
            String value = keysAndValues[i + 1];
            if (value != null && !value.isEmpty()) {
                builder.setAttribute(keysAndValues[i], value);
            }
        }
        return builder.startSpan();
    }

    /**
     * As {@link #child}, but only where {@code parent} holds a span: work that arrives outside any trace (a record
     * without a traceparent) starts none, and gets the span that does nothing.
     */
    public static Span childIfTraced(Tracer tracer, String name, Context parent, SpanKind kind, String... keysAndValues) {
        return traced(parent) ? child(tracer, name, parent, kind, keysAndValues) : Span.getInvalid();
    }

    /** Whether {@code context} holds a span to continue. */
    public static boolean traced(Context context) {
        return Span.fromContext(context).getSpanContext().isValid();
    }

    /** The span's trace id, for the log field; null for a span that records nothing. */
    public static String traceId(Span span) {
        return span.getSpanContext().isValid() ? span.getSpanContext().getTraceId() : null;
    }

    /** Ends the span, as failed with the failure's message when there is one. */
    public static void end(Span span, Throwable failure) {
        if (failure != null) {
            span.setStatus(StatusCode.ERROR, String.valueOf(failure.getMessage()));
        }
        span.end();
    }
}
