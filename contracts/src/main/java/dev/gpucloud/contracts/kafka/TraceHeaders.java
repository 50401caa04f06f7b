package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.tracing.Traceparent;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * W3C Trace Context on Kafka records: the {@code traceparent} (and {@code tracestate}) headers that carry one job's
 * trace from the scheduler through node.commands to the agent, and from the agent through allocation.events and
 * usage.events to billing (docs/operations.md, "Traces").
 */
public final class TraceHeaders {

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final TextMapGetter<Headers> FROM_HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
            List<String> keys = new ArrayList<>();
            carrier.forEach(h -> keys.add(h.key()));
            return keys;
        }

        @Override
        public String get(Headers carrier, String key) {
            if (carrier == null) {
                return null;
            }
            Header header = carrier.lastHeader(key);
            return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
        }
    };

    private TraceHeaders() {
    }

    /** Writes {@code context}'s span as the record's parent, replacing any earlier one; nothing for an empty context. */
    public static void inject(Context context, Headers headers) {
        for (String field : W3C.fields()) {
            headers.remove(field);
        }
        W3C.inject(context, headers, (carrier, key, value) -> carrier.add(key, value.getBytes(StandardCharsets.UTF_8)));
    }

    /** Writes {@code traceparent} as the record's parent; nothing for null. */
    public static void inject(String traceparent, Headers headers) {
        inject(Traceparent.parent(traceparent), headers);
    }

    /** The context a record's headers name as parent; the root context when they name none or a malformed one. */
    public static Context extract(Headers headers) {
        return W3C.extract(Context.root(), headers, FROM_HEADERS);
    }
}
