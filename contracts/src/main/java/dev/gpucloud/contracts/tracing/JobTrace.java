package dev.gpucloud.contracts.tracing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One job's trace, put together from span logs: every span of every trace in which some span names the job
 * ({@code job_id}), as a tree of parents and children in start order. A job has one trace from SubmitJob to its
 * invoice lines; it has more only where a link was lost (an agent restarted while the job ran, say).
 */
public record JobTrace(String jobId, Set<String> traceIds, List<LoggedSpan> spans) {

    /** The attribute that names a job on a span, the same key as the log field. */
    public static final String JOB_ID = "job_id";

    /** Attributes shown beside a span's name, in this order, where it has them. */
    private static final List<String> SHOWN = List.of("job_id", "tenant", "node_id", "allocation_id", "command",
            "event", "messaging.destination.name", "rpc.method", "gpus", "units", "sku", "invoice.month");

    public static JobTrace of(List<LoggedSpan> all, String jobId) {
        Set<String> traces = new LinkedHashSet<>();
        for (LoggedSpan span : all) {
            if (jobId.equals(span.attribute(JOB_ID))) {
                traces.add(span.traceId());
            }
        }
        List<LoggedSpan> spans = new ArrayList<>();
        Set<String> seen = new java.util.HashSet<>();
        for (LoggedSpan span : all) {
            if (traces.contains(span.traceId()) && seen.add(span.traceId() + "/" + span.spanId())) {
                spans.add(span);
            }
        }
        spans.sort(Comparator.comparing(LoggedSpan::start));
        return new JobTrace(jobId, traces, List.copyOf(spans));
    }

    public boolean isEmpty() {
        return spans.isEmpty();
    }

    /** Spans whose parent is not among the spans: one, the SubmitJob call, for a trace that is whole. */
    public List<LoggedSpan> roots() {
        Set<String> ids = new java.util.HashSet<>();
        spans.forEach(s -> ids.add(s.spanId()));
        return spans.stream().filter(s -> s.parentSpanId() == null || !ids.contains(s.parentSpanId())).toList();
    }

    /** The services that have spans in it, in the order they first appear. */
    public List<String> services() {
        return spans.stream().map(LoggedSpan::service).distinct().toList();
    }

    /** The trace as an indented tree: offset from its first span, duration, service, name and the shown attributes. */
    public String render() {
        if (spans.isEmpty()) {
            return "";
        }
        Map<String, List<LoggedSpan>> children = new HashMap<>();
        for (LoggedSpan span : spans) {
            if (span.parentSpanId() != null) {
                children.computeIfAbsent(span.parentSpanId(), k -> new ArrayList<>()).add(span);
            }
        }
        Instant first = spans.get(0).start();
        StringBuilder out = new StringBuilder();
        for (String trace : traceIds) {
            out.append("trace ").append(trace).append('\n');
            for (LoggedSpan root : roots()) {
                if (root.traceId().equals(trace)) {
                    render(out, root, children, first, 1);
                }
            }
        }
        return out.toString();
    }

    private static void render(StringBuilder out, LoggedSpan span, Map<String, List<LoggedSpan>> children,
            Instant first, int depth) {
        out.append(String.format("%10s %9s  %s%-11s %s", offset(Duration.between(first, span.start())),
                millis(span.duration()), "  ".repeat(depth - 1), span.service(), span.name()));
        for (String key : SHOWN) {
            String value = span.attribute(key);
            if (value != null && !(key.equals("job_id") && depth > 1)) {
                out.append(' ').append(key).append('=').append(value);
            }
        }
        if ("ERROR".equals(span.status())) {
            out.append("  [ERROR]");
        }
        out.append('\n');
        for (LoggedSpan child : children.getOrDefault(span.spanId(), List.of())) {
            render(out, child, children, first, depth + 1);
        }
    }

    private static String offset(Duration d) {
        return "+" + millis(d);
    }

    private static String millis(Duration d) {
        double ms = d.toNanos() / 1e6;
        return ms >= 10_000 ? String.format("%.1fs", ms / 1000) : String.format("%.1fms", ms);
    }
}
