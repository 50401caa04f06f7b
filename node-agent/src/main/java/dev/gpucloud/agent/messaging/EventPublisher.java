package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.TraceHeaders;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.contracts.tracing.Traceparent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jboss.logging.Logger;

/**
 * Sends everything the agent publishes through one Kafka channel: each record is built with its
 * topic, key and CloudEvents headers, and SmallRye sends it as it is. Its ce_source names the host
 * the event is about ("/node-agent/sim-a100-0").
 */
@ApplicationScoped
public class EventPublisher {

    private static final Logger LOG = Logger.getLogger(EventPublisher.class);

    @Inject
    DurableOutbox outbox;
    @Inject
    AllocationTraces traces;
    @Inject
    Tracer tracer;

    /** The CloudEvents source of events about {@code nodeId}. */
    public static String source(String nodeId) {
        return "/node-agent/" + nodeId;
    }

    /** A record of {@code payload} on {@code topic}, keyed by {@code key}, about host {@code nodeId}. */
    public static <T> ProducerRecord<String, byte[]> record(Topic<T> topic, String key, T payload, String nodeId) {
        return EventRecords.record(topic, key, payload, source(nodeId));
    }

    /** Sends one record once subscribed; the item arrives when the broker has it. Not spooled. */
    public Uni<Void> send(ProducerRecord<String, byte[]> record) {
        return outbox.send(record);
    }

    /** Queues one telemetry record; telemetry may be shed, oldest first, while the broker is away. */
    public void sendTelemetry(ProducerRecord<String, byte[]> record) {
        outbox.telemetry(record);
    }

    /** Spools records (usage, allocation and node events): durable on return, removed once Kafka has them. */
    public void spool(List<ProducerRecord<String, byte[]>> records) {
        outbox.spool(records);
    }

    /**
     * Logs a runner's reports and writes their events to the durable spool; completes once they are
     * on disk. They reach Kafka from there, however long the broker is away.
     */
    public Uni<Void> publish(Reports reports) {
        return publish(reports, null);
    }

    /**
     * As {@link #publish(Reports)}, for the reports of a command handled in the span {@code commandTrace} names: its
     * events are published under that span; other events under the span their allocation was started in.
     */
    public Uni<Void> publish(Reports reports, String commandTrace) {
        if (reports.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        reports.notes().forEach(note -> LOG.info(note));
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
        List<String> ended = new ArrayList<>();
        for (AllocationEvent event : reports.allocationEvents()) {
            log(event);
            ProducerRecord<String, byte[]> record = record(Topics.ALLOCATION_EVENTS, event.jobId(), event,
                    event.nodeId());
            traced(record, commandTrace, event.allocationId(), event.type().name(), LogFields.JOB_ID, event.jobId(),
                    LogFields.NODE_ID, event.nodeId());
            records.add(record);
            if (event.type() == AllocationEventType.EXITED || event.type() == AllocationEventType.LOST) {
                ended.add(event.allocationId());
            }
        }
        for (UsageEvent usage : reports.usage()) {
            LOG.debugf("usage of %s: [%s, %s) %d x %s", usage.allocationId(), usage.from(), usage.to(), usage.units(),
                    usage.sku().code());
            ProducerRecord<String, byte[]> record = record(Topics.USAGE_EVENTS, usage.allocationId(), usage,
                    usage.nodeId());
            traced(record, commandTrace, usage.allocationId(), "usage", LogFields.JOB_ID, usage.jobId(),
                    LogFields.NODE_ID, usage.nodeId(), "units", String.valueOf(usage.units()), "sku", usage.sku().code());
            records.add(record);
        }
        ended.forEach(traces::ended); // after their last usage, which the same reports carry
        if (records.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        try {
            spool(records);
            return Uni.createFrom().voidItem();
        } catch (RuntimeException e) {
            // The disk refused (full, read-only): send directly rather than not at all.
            LOG.errorf(e, "cannot spool %d event(s), sending them without the spool: %s", records.size(), e.getMessage());
            return Uni.join().all(records.stream().map(r -> send(r).onFailure().invoke(f -> LOG.errorf(
                    "lost %s record %s: %s", r.topic(), r.key(), f.getMessage())).onFailure().recoverWithNull())
                    .toList()).andCollectFailures().replaceWithVoid();
        }
    }

    /**
     * Publishes {@code record} in a span of its own, a child of the command's span or else of the one its allocation
     * started in, and writes that span into its headers; an allocation outside any trace gets none.
     */
    private void traced(ProducerRecord<String, byte[]> record, String commandTrace, String allocationId, String what,
            String... attributes) {
        String parent = commandTrace != null ? commandTrace : traces.of(allocationId);
        if (parent == null) {
            return;
        }
        Span span = Spans.child(tracer, record.topic() + " publish", Traceparent.parent(parent), SpanKind.PRODUCER,
                attributes);
        span.setAttribute(LogFields.ALLOCATION_ID, allocationId);
        span.setAttribute("event", what);
        span.setAttribute("messaging.destination.name", record.topic());
        TraceHeaders.inject(Context.root().with(span), record.headers());
        span.end(); // durable in the spool from here: the broker has it when the spool says so
    }

    private static void log(AllocationEvent event) {
        try (LogFields fields = LogFields.of(LogFields.JOB_ID, event.jobId(), LogFields.NODE_ID, event.nodeId(),
                LogFields.ALLOCATION_ID, event.allocationId())) {
            logIn(event);
        }
    }

    private static void logIn(AllocationEvent event) {
        switch (event.type()) {
            case STARTED -> LOG.infof("started %s of %s on %s: %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
            case EXITED -> LOG.infof("%s of %s on %s %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
            case CHECKPOINT_SAVED -> LOG.infof("%s of %s on %s saved checkpoint %s", event.allocationId(),
                    event.jobId(), event.nodeId(), event.checkpointPath());
            case LOST -> LOG.warnf("%s of %s on %s lost: %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
        }
    }
}
