package dev.gpucloud.scheduler.service.messaging;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.TelemetryAllocations;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobRequest;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.TraceHeaders;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.scheduler.service.config.EnrolmentKey;
import dev.gpucloud.scheduler.service.engine.HostAgents;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import jakarta.enterprise.context.ApplicationScoped;
import dev.gpucloud.scheduler.service.engine.DatabaseFailures;
import io.smallrye.reactive.messaging.MutinyEmitter;
import java.time.Duration;
import java.util.Map;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * The scheduler's Kafka inputs. Inventory and telemetry come through SmallRye channels on every
 * instance (a standby keeps its fleet warm); a record of inventory that cannot be decoded fails its Uni
 * and SmallRye dead-letters it. Allocation events, job requests and node events change state, so only
 * the leader reads them ({@link LeaderInputs}); a record of those that cannot be applied is written to
 * its topic's dead-letter topic here, with the reason in the dead-letter-reason header.
 */
@ApplicationScoped
public class FleetConsumers {

    private static final Logger LOG = Logger.getLogger(FleetConsumers.class);

    private final SchedulerEngine engine;
    private final MutinyEmitter<ProducerRecord<String, byte[]>> out;
    /** Checks agents' records where an enrolment key is configured; null without one. */
    private final Enrolment.Verifier enrolment;
    private final HostAgents agents;
    private final Tracer tracer;

    public FleetConsumers(SchedulerEngine engine,
            @Channel("events-out") MutinyEmitter<ProducerRecord<String, byte[]>> out, EnrolmentKey key,
            HostAgents agents, Tracer tracer) {
        this.engine = engine;
        this.tracer = tracer;
        this.out = out;
        this.enrolment = key.verifier();
        this.agents = agents;
    }

    /**
     * Hosts join, change and leave (tombstone) on the compacted inventory topic. The agent that signed a host's
     * inventory is the one its STARTs' secrets are sealed for ({@link HostAgents}).
     */
    @Incoming("inventory-in")
    public Uni<Void> inventory(ConsumerRecord<String, byte[]> record) {
        return decode(() -> read(Topics.GPU_INVENTORY, record)).flatMap(e -> {
            if (e.isTombstone()) {
                agents.left(e.key());
                return engine.hostLeft(e.key());
            }
            requireKey(Topics.GPU_INVENTORY.name(), e, e.payload().nodeId());
            agents.heard(e.key(), Enrolment.Agent.of(record.headers()));
            return engine.hostReported(e.payload());
        });
    }

    /** A record decoded, and where this scheduler has an enrolment key, checked as signed by its host's agent. */
    private <T> Envelope<T> read(Topic<T> topic, ConsumerRecord<String, byte[]> record) {
        return EventRecords.decode(topic, record, Instant.now(), enrolment);
    }

    /**
     * Telemetry tells the scheduler that a host is alive (the key and the record's time) and what its
     * agent runs (the sample's {@code allocations}), which the engine reconciles with what it placed.
     * A sample that cannot be read still proves the host alive; it never fails.
     */
    @Incoming("telemetry-in")
    public Uni<Void> telemetry(ConsumerRecord<String, byte[]> record) {
        if (record.key() == null || record.key().isBlank() || record.value() == null) {
            return Uni.createFrom().voidItem();
        }
        if (!enrolled(enrolment, record)) {
            return Uni.createFrom().voidItem(); // proves nothing about the host it names
        }
        Instant at = Instant.ofEpochMilli(record.timestamp());
        Instant now = Instant.now();
        engine.heardFrom(record.key(), at.isAfter(now) ? now : at, runningOn(record));
        return Uni.createFrom().voidItem();
    }

    private static final AtomicLong lastRefusalLogged = new AtomicLong();

    /**
     * Whether a telemetry record was sent by an agent enrolled for the host it names, where this scheduler has an
     * enrolment key (docs/security.md, "Enrolment"). Telemetry is read here without a full decode, so the check is
     * made here; a refusal is logged at most every ten seconds, since a forger may send thousands.
     */
    static boolean enrolled(Enrolment.Verifier enrolment, ConsumerRecord<String, byte[]> record) {
        if (enrolment == null) {
            return true;
        }
        try {
            enrolment.check(record, CloudEventHeaders.text(record.headers(), CloudEventHeaders.SOURCE), record.key());
            return true;
        } catch (MalformedEventException e) {
            long now = System.currentTimeMillis();
            long last = lastRefusalLogged.get();
            if (now - last >= 10_000 && lastRefusalLogged.compareAndSet(last, now)) {
                LOG.warnf("ignoring telemetry that names host %s: %s", Check.clip(record.key()), e.getMessage());
            }
            return false;
        }
    }

    /** The allocations a telemetry record says its host runs, or null when it does not say (or cannot be read). */
    static List<AllocationReport> runningOn(ConsumerRecord<String, byte[]> record) {
        try {
            TelemetryAllocations sample = EventCodec.decode(Topics.GPU_TELEMETRY.name(), TelemetryAllocations.class,
                    record.value());
            return sample.nodeId().equals(record.key()) ? sample.allocations() : null;
        } catch (RuntimeException e) {
            LOG.debugf("telemetry of %s not readable for its allocations: %s", record.key(), e.getMessage());
            return null;
        }
    }

    /**
     * Allocation events come a poll at a time, so the engine applies them in one transaction (group
     * commit) instead of one each. A record that is not a valid event is dead-lettered here, with the
     * reason, before the batch is applied; an event the engine refuses alone is dead-lettered after it.
     * The poll's offsets are committed only once both are done.
     */
    public Uni<Void> allocations(List<ConsumerRecord<String, byte[]>> records) {
        List<AllocationEvent> events = new ArrayList<>(records.size());
        List<ConsumerRecord<String, byte[]>> sources = new ArrayList<>(records.size());
        List<ProducerRecord<String, byte[]>> dead = new ArrayList<>();
        List<Span> spans = new ArrayList<>(records.size());
        for (ConsumerRecord<String, byte[]> record : records) {
            try {
                Envelope<AllocationEvent> e = read(Topics.ALLOCATION_EVENTS, record);
                if (e.payload() == null) {
                    throw new MalformedEventException(Topics.ALLOCATION_EVENTS.name() + ": record has no value");
                }
                requireKey(Topics.ALLOCATION_EVENTS.name(), e, e.payload().jobId());
                events.add(e.payload());
                sources.add(record);
                AllocationEvent event = e.payload();
                spans.add(Spans.childIfTraced(tracer, "allocation.events " + event.type() + " apply",
                        TraceHeaders.extract(record.headers()), SpanKind.CONSUMER, LogFields.JOB_ID, event.jobId(),
                        LogFields.NODE_ID, event.nodeId(), LogFields.ALLOCATION_ID, event.allocationId()));
            } catch (MalformedEventException | IllegalArgumentException e) {
                dead.add(deadLetter(record, e.getMessage()));
            }
        }
        Uni<Map<Integer, Throwable>> applied = Uni.createFrom().deferred(() -> engine.allocationEvents(events))
                .flatMap(failed -> {
                    for (Throwable failure : failed.values()) {
                        if (failure instanceof NotLeaderException) {
                            return Uni.createFrom().failure(failure); // deposed: the next leader applies them
                        }
                        if (isTransient(failure)) {
                            return Uni.createFrom().failure(failure); // the database, not the event: retry them all
                        }
                    }
                    return Uni.createFrom().item(failed);
                })
                .onFailure(FleetConsumers::isTransient).invoke(f -> LOG.warnf(
                        "could not apply %d allocation events (%s); retrying", events.size(), f.toString()))
                .onFailure(FleetConsumers::isTransient).retry().withBackOff(Duration.ofMillis(200), Duration.ofSeconds(10))
                .indefinitely();
        return sendAll(dead).chain(() -> applied).invoke(failed -> {
            for (int i = 0; i < spans.size(); i++) {
                Spans.end(spans.get(i), failed.get(i));
            }
        }).flatMap(failed -> {
            List<ProducerRecord<String, byte[]>> refused = new ArrayList<>();
            failed.forEach((index, failure) -> refused.add(deadLetter(sources.get(index),
                    failure.getMessage() == null ? failure.toString() : failure.getMessage())));
            return sendAll(refused);
        });
    }

    /** Whether a failure is the database's, worth retrying, rather than the event's (see {@link DatabaseFailures}). */
    static boolean isTransient(Throwable e) {
        return DatabaseFailures.isTransient(e);
    }

    /**
     * Applies one record with {@code apply}: a database failure is retried (until it works or this instance
     * is deposed, which fails it with {@link NotLeaderException}); any other failure dead-letters the record
     * to {@code dlqTopic} with the reason.
     */
    private Uni<Void> oneOrDeadLetter(ConsumerRecord<String, byte[]> record, String dlqTopic,
            java.util.function.Function<ConsumerRecord<String, byte[]>, Uni<Void>> apply) {
        return Uni.createFrom().deferred(() -> apply.apply(record))
                .onFailure(FleetConsumers::isTransient).invoke(f -> LOG.warnf("could not apply %s-%d@%d (%s); retrying",
                        record.topic(), record.partition(), record.offset(), f.toString()))
                .onFailure(FleetConsumers::isTransient).retry().withBackOff(Duration.ofMillis(200), Duration.ofSeconds(10))
                .indefinitely()
                .onFailure(f -> !(f instanceof NotLeaderException)).recoverWithUni(f -> {
                    String reason = f.getMessage() == null ? f.toString() : f.getMessage();
                    LOG.warnf("dead-lettering %s-%d@%d: %s", record.topic(), record.partition(), record.offset(), reason);
                    return sendAll(List.of(EventRecords.deadLetter(record, dlqTopic, reason)));
                });
    }

    /** A job request, applied or dead-lettered to job.requests.dlq. */
    public Uni<Void> requestOrDeadLetter(ConsumerRecord<String, byte[]> record) {
        return oneOrDeadLetter(record, Topics.JOB_REQUESTS.deadLetterTopic(), this::requests);
    }

    /** A node event, applied or dead-lettered to node.events.dlq. */
    public Uni<Void> nodeEventOrDeadLetter(ConsumerRecord<String, byte[]> record) {
        return oneOrDeadLetter(record, Topics.NODE_EVENTS.deadLetterTopic(), this::nodeEvents);
    }

    private static ProducerRecord<String, byte[]> deadLetter(ConsumerRecord<String, byte[]> record, String reason) {
        LOG.warnf("dead-lettering %s-%d@%d: %s", record.topic(), record.partition(), record.offset(), reason);
        return EventRecords.deadLetter(record, Topics.ALLOCATION_EVENTS.deadLetterTopic(), reason);
    }

    /** Sends the dead letters in order; completes when the broker has acknowledged all of them. */
    private Uni<Void> sendAll(List<ProducerRecord<String, byte[]>> records) {
        if (records.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Uni<Void>> sends = new ArrayList<>();
        records.forEach(r -> sends.add(out.send(r)));
        return Uni.join().all(sends).andFailFast().replaceWithVoid();
    }

    /** Job submissions from producers other than gRPC; deduplicated on (tenant, clientRequestId). */
    Uni<Void> requests(ConsumerRecord<String, byte[]> record) {
        return decode(() -> read(Topics.JOB_REQUESTS, record)).flatMap(e -> {
            JobRequest request = e.payload();
            if (request == null) {
                throw new MalformedEventException(Topics.JOB_REQUESTS.name() + ": record has no value");
            }
            requireKey(Topics.JOB_REQUESTS.name(), e, request.tenant());
            return engine.submit(request.tenant(), request.clientRequestId(), request.spec(),
                            TraceHeaders.extract(record.headers()))
                    .invoke(s -> LOG.infof("job.requests %s/%s -> %s%s", request.tenant(), request.clientRequestId(),
                            s.job().jobId(), s.duplicate() ? " (repeat)" : ""))
                    .replaceWithVoid();
        }).onFailure(f -> !isTransient(f) && !(f instanceof NotLeaderException))
                .transform(e -> DeadLetterReasons.forDeadLetter(Topics.JOB_REQUESTS.name(), e));
    }

    Uni<Void> nodeEvents(ConsumerRecord<String, byte[]> record) {
        return decode(() -> read(Topics.NODE_EVENTS, record)).flatMap(e -> {
            NodeEvent event = e.payload();
            if (event == null) {
                throw new MalformedEventException(Topics.NODE_EVENTS.name() + ": record has no value");
            }
            requireKey(Topics.NODE_EVENTS.name(), e, event.nodeId());
            return engine.nodeEvent(event);
        });
    }

    private static <T> Uni<Envelope<T>> decode(java.util.function.Supplier<Envelope<T>> decoder) {
        return Uni.createFrom().item(decoder);
    }

    private static void requireKey(String topic, Envelope<?> e, String expected) {
        if (!e.key().equals(expected)) {
            throw new MalformedEventException(topic + ": record key '" + e.key()
                    + "' does not match the payload's '" + expected + "'");
        }
    }
}
