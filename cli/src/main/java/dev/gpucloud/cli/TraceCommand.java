package dev.gpucloud.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.contracts.tracing.JobTrace;
import dev.gpucloud.contracts.tracing.LoggedSpan;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gpucloud trace JOB}: one job's trace, read back from the span logs the local stack's services write (each
 * service's {@code gpucloud.tracing.span-log}; {@code ./gpucloud up} puts them in {@code .run/traces}): from SubmitJob
 * through placement, node.commands and the agent to allocation.events, usage.events and billing's fold, as a tree.
 * A cluster sends its spans to a collector instead (docs/operations.md, "Traces").
 */
@Command(name = "trace", description = {"Show one job's trace: every span from SubmitJob to its invoice lines, as a tree"
        + " (offset from the first span, duration, service, what, and the job, host and allocation it concerns).",
        "Reads the span logs of the local stack (./gpucloud up writes them to .run/traces)."})
final class TraceCommand implements Callable<Integer> {

    private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final ObjectMapper JSON = new ObjectMapper();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "JOB", description = "The job's id (job-...).")
    String jobId;
    @Option(names = "--spans", paramLabel = "DIR|FILE", defaultValue = "${env:GPUCLOUD_SPAN_LOGS:-.run/traces}",
            description = "A span log, or a folder of them (*.jsonl); default: ${DEFAULT-VALUE} (env"
                    + " GPUCLOUD_SPAN_LOGS).")
    Path spans;
    /** text (a tree), json (one span a line, in start order) or yaml (a list of them). */
    @CommandLine.Mixin
    Output output;

    @Override
    public Integer call() {
        Output.Format format = output.format(Output.Format.TEXT, Output.Format.JSON, Output.Format.YAML);
        if (!JOB_ID.matcher(jobId).matches()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "JOB must be a job id such as job-3f2a9c0d1e4b,"
                    + " was '" + GpucloudCli.clip(jobId, 64) + "'");
        }
        LoggedSpan.Read read;
        try {
            read = LoggedSpan.read(spans);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new Problem(e.getMessage() + "; start the stack with ./gpucloud up (its services write span logs to"
                    + " .run/traces), or point --spans (env GPUCLOUD_SPAN_LOGS) at one");
        }
        JobTrace trace = JobTrace.of(read.spans(), jobId);
        PrintWriter err = spec.commandLine().getErr();
        if (read.unreadable() > 0) {
            err.println("note: skipped " + read.unreadable() + " line(s) of " + spans + " that are not spans");
        }
        if (trace.isEmpty()) {
            throw new Problem("no span of " + jobId + " in " + spans + " (" + read.spans().size() + " spans in "
                    + read.files().size() + " file(s)): a job submitted before tracing was on, or to another stack,"
                    + " has none");
        }
        PrintWriter out = spec.commandLine().getOut();
        if (format == Output.Format.JSON) {
            for (LoggedSpan span : trace.spans()) {
                out.println(json(span));
            }
        } else if (format == Output.Format.YAML) {
            com.fasterxml.jackson.databind.node.ArrayNode list = JSON.createArrayNode();
            for (LoggedSpan span : trace.spans()) {
                try {
                    list.add(JSON.readTree(json(span)));
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new IllegalStateException(e);
                }
            }
            out.print(output.document(list));
        } else {
            out.print(trace.render());
            if (trace.traceIds().size() > 1) {
                err.println("note: " + jobId + " has " + trace.traceIds().size() + " traces, not one: a link between"
                        + " its spans was lost (an agent restarted while it ran, or a record without its traceparent)");
            }
        }
        out.flush();
        return 0;
    }

    private static String json(LoggedSpan span) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("trace_id", span.traceId());
        line.put("span_id", span.spanId());
        line.put("parent_span_id", span.parentSpanId());
        line.put("service", span.service());
        line.put("name", span.name());
        line.put("kind", span.kind());
        line.put("start", span.start().toString());
        line.put("duration_ms", span.duration().toNanos() / 1e6);
        line.put("status", span.status());
        line.put("attributes", span.attributes());
        try {
            return JSON.writeValueAsString(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A span log that cannot be read, or holds nothing of the job: one line on stderr, exit 1. */
    static final class Problem extends RuntimeException {
        Problem(String message) {
            super(message);
        }
    }
}
