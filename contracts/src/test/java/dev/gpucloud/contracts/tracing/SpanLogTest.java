package dev.gpucloud.contracts.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.kafka.TraceHeaders;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpanLogTest {

    @TempDir
    Path dir;

    private final java.util.List<SdkTracerProvider> providers = new java.util.ArrayList<>();

    @AfterEach
    void close() {
        providers.forEach(SdkTracerProvider::close);
    }

    /** A service's tracer writing to its own span log in {@code dir}, as each service of the local stack does. */
    private Tracer service(String name) {
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(Resource.create(Attributes.of(io.opentelemetry.api.common.AttributeKey.stringKey(
                        "service.name"), name)))
                .addSpanProcessor(SimpleSpanProcessor.create(new SpanLogExporter(dir.resolve(name + ".jsonl"), 1 << 20)))
                .build();
        providers.add(provider);
        return provider.get("test");
    }

    @Test
    void a_trace_that_crosses_services_through_stored_rows_and_record_headers_reads_back_as_one_tree() {
        Tracer scheduler = service("scheduler");
        Tracer agent = service("node-agent");
        Tracer billing = service("billing");

        Span submit = scheduler.spanBuilder("SubmitJob").setSpanKind(SpanKind.SERVER).startSpan();
        submit.setAttribute("job_id", "job-1");
        String stored = Traceparent.of(submit); // the job row keeps it
        submit.end();

        Span place = scheduler.spanBuilder("place job").setParent(Traceparent.parent(stored)).startSpan();
        place.setAttribute("job_id", "job-1").setAttribute("node_id", "h-0");
        RecordHeaders command = new RecordHeaders();
        TraceHeaders.inject(Context.root().with(place), command);
        place.end();

        Span start = agent.spanBuilder("node.commands START").setSpanKind(SpanKind.CONSUMER)
                .setParent(TraceHeaders.extract(command)).startSpan();
        start.setAttribute("allocation_id", "a-1");
        RecordHeaders usage = new RecordHeaders();
        TraceHeaders.inject(Traceparent.of(start), usage);
        start.end();

        Span fold = billing.spanBuilder("usage.events fold").setParent(TraceHeaders.extract(usage)).startSpan();
        fold.end();
        scheduler.spanBuilder("unrelated").startSpan().end();

        LoggedSpan.Read read = LoggedSpan.read(dir);
        assertThat(read.files()).hasSize(3);
        assertThat(read.unreadable()).isZero();
        JobTrace trace = JobTrace.of(read.spans(), "job-1");
        assertThat(trace.traceIds()).containsExactly(submit.getSpanContext().getTraceId());
        assertThat(trace.spans()).extracting(LoggedSpan::name)
                .containsExactly("SubmitJob", "place job", "node.commands START", "usage.events fold");
        assertThat(trace.roots()).extracting(LoggedSpan::name).containsExactly("SubmitJob");
        assertThat(trace.services()).containsExactly("scheduler", "node-agent", "billing");
        assertThat(trace.render()).contains("scheduler   SubmitJob job_id=job-1")
                .containsPattern("\\n.*  node-agent  node.commands START allocation_id=a-1")
                .doesNotContain("unrelated");
    }

    @Test
    void malformed_lines_are_counted_and_a_missing_log_is_named() throws Exception {
        Tracer scheduler = service("scheduler");
        scheduler.spanBuilder("SubmitJob").setAttribute("job_id", "job-2").startSpan().end();
        Files.writeString(dir.resolve("scheduler.jsonl"), "{not json\n{\"trace_id\":1}\n\n",
                java.nio.file.StandardOpenOption.APPEND);

        LoggedSpan.Read read = LoggedSpan.read(dir);
        assertThat(read.spans()).hasSize(1);
        assertThat(read.unreadable()).isEqualTo(2);
        assertThat(JobTrace.of(read.spans(), "job-other").isEmpty()).isTrue();
        assertThatThrownBy(() -> LoggedSpan.read(dir.resolve("nothing-here")))
                .hasMessage("no span log at " + dir.resolve("nothing-here"));
    }

    @Test
    void the_log_rolls_past_its_size_and_both_files_are_read() {
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(new SpanLogExporter(dir.resolve("s.jsonl"), 2_000)))
                .build();
        providers.add(provider);
        for (int i = 0; i < 40; i++) {
            provider.get("test").spanBuilder("span-" + i).setAttribute("job_id", "job-3").startSpan().end();
        }
        assertThat(dir.resolve("s.jsonl.1")).exists();
        LoggedSpan.Read read = LoggedSpan.read(dir);
        assertThat(read.files()).extracting(p -> p.getFileName().toString()).containsExactly("s.jsonl", "s.jsonl.1");
        // the oldest roll-overs are gone, the newest spans are all there, and no line is ever half written
        assertThat(read.spans().size()).isBetween(2, 39);
        assertThat(read.spans()).extracting(LoggedSpan::name).contains("span-39", "span-38");
        assertThat(read.unreadable()).isZero();
    }

    @Test
    void a_malformed_or_absent_traceparent_starts_a_new_trace_rather_than_failing() {
        assertThat(Traceparent.traceId(null)).isNull();
        assertThat(Traceparent.traceId("00-zz-yy-01")).isNull();
        assertThat(Traceparent.of(Traceparent.parent("garbage"))).isNull();
        String valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assertThat(Traceparent.traceId(valid)).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(Traceparent.of(Traceparent.parent(valid))).isEqualTo(valid);

        RecordHeaders headers = new RecordHeaders();
        headers.add(Traceparent.HEADER, "not-a-traceparent".getBytes(StandardCharsets.UTF_8));
        assertThat(Span.fromContext(TraceHeaders.extract(headers)).getSpanContext().isValid()).isFalse();
        TraceHeaders.inject(valid, headers); // replaces, never adds a second
        assertThat(headers.headers(Traceparent.HEADER)).hasSize(1);
        assertThat(Traceparent.of(TraceHeaders.extract(headers))).isEqualTo(valid);
        TraceHeaders.inject((String) null, headers);
        assertThat(headers.headers(Traceparent.HEADER)).isEmpty();
    }

    @Test
    void the_otlp_endpoint_gets_its_path_and_a_wrong_one_is_named() {
        assertThat(TraceExport.tracesEndpoint(URI.create("http://collector:4318")))
                .isEqualTo(URI.create("http://collector:4318/v1/traces"));
        assertThat(TraceExport.tracesEndpoint(URI.create("https://c.example/otlp/v1/traces")))
                .isEqualTo(URI.create("https://c.example/otlp/v1/traces"));
        assertThatThrownBy(() -> TraceExport.tracesEndpoint(URI.create("collector:4317")))
                .hasMessageContaining("gpucloud.tracing.otlp-endpoint must be an http(s) URL")
                .hasMessageContaining("'collector:4317'");
        assertThat(TraceExport.exporter(java.util.Optional.empty(), java.util.Optional.empty())).isNotNull();
        assertThatThrownBy(() -> new SpanLogExporter(Path.of("/proc/no-such/spans.jsonl"), 10))
                .hasMessageStartingWith("cannot write the span log /proc/no-such/spans.jsonl");
    }
}
