package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.contracts.kafka.TraceHeaders;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.persistence.OutboxEntity;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * The transactional outbox: records are written with the change they announce and published after
 * the commit, oldest first; a row is deleted only once the broker has acknowledged it. A crash or a
 * broker outage delays records, never loses them; a record may be sent twice, and consumers drop the
 * repeat by its ce_id. Publishing runs on its own context, one pass at a time, so a slow or absent
 * broker never holds up the scheduler's operations.
 *
 * <p>Only the leader publishes, and each batch first reads the leader's epoch: an instance that finds it
 * was deposed (paused past its lease, then resumed) publishes nothing more. Node commands are stamped with
 * the epoch they were written under (by the engine), so agents refuse those of a deposed leader that
 * were on their way.
 */
@ApplicationScoped
public class Outbox {

    private static final Logger LOG = Logger.getLogger(Outbox.class);
    private static final int BATCH = 200;

    private final MutinyEmitter<ProducerRecord<String, byte[]>> emitter;
    private final String source;
    private final Mutiny.SessionFactory sessions;
    private final Context context;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean again = new AtomicBoolean();
    private final LeaderState leader;
    private final Tracer tracer;

    public Outbox(@Channel("events-out") MutinyEmitter<ProducerRecord<String, byte[]>> emitter, SchedulerConfig config,
            Mutiny.SessionFactory sessions, Vertx vertx, LeaderState leader, Tracer tracer) {
        this.emitter = emitter;
        this.tracer = tracer;
        this.leader = leader;
        this.source = config.source();
        this.sessions = sessions;
        this.context = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
        VertxContextSafetyToggle.setContextSafe(context, true);
    }

    /** Starts a publishing pass, or asks the running one to go round once more. */
    public void kick() {
        if (!running.compareAndSet(false, true)) {
            again.set(true);
            return;
        }
        again.set(false);
        context.runOnContext(v -> publish().subscribe().with(
                sent -> finish(sent == BATCH),
                failure -> finish(false)));
    }

    private void finish(boolean more) {
        running.set(false);
        if (more || again.get()) {
            kick();
        }
    }

    /** Adds a record to the session's transaction (node commands come stamped with their epoch). */
    public <T> Uni<Void> add(Mutiny.Session session, Topic<T> topic, String key, T payload) {
        return add(session, topic, key, payload, null);
    }

    /** As {@link #add(Mutiny.Session, Topic, String, Object)}, published in the trace {@code traceparent} names. */
    public <T> Uni<Void> add(Mutiny.Session session, Topic<T> topic, String key, T payload, String traceparent) {
        return session.persist(row(topic, key, payload, traceparent));
    }

    /** The record's row, for the caller to persist (with others, in one {@code persistAll}). */
    <T> OutboxEntity row(Topic<T> topic, String key, T payload, String traceparent) {
        CloudEvent event = CloudEvent.create(topic.eventType(), source, Instant.now());
        OutboxEntity row = new OutboxEntity();
        row.topic = topic.name();
        row.recordKey = key;
        row.payload = EventCodec.encode(payload);
        row.ceId = event.id();
        row.ceType = event.type();
        row.ceTime = event.time();
        row.traceparent = traceparent;
        return row;
    }

    /** Publishes up to one batch of what is waiting, oldest first; returns how many were sent. */
    private Uni<Integer> publish() {
        long epoch = leader.epoch();
        if (epoch == 0) {
            return Uni.createFrom().item(0);
        }
        return sessions.withTransaction(session -> session
                .createSelectionQuery("select epoch from LeaderRow where id = 1", Long.class).getSingleResult()
                .flatMap(current -> current == epoch ? Uni.createFrom().voidItem()
                        : Uni.createFrom().failure(leader.fenced("the leader's epoch is " + current + ", not " + epoch)))
                .chain(() -> session.createSelectionQuery("from OutboxEntity order by id", OutboxEntity.class)
                .setMaxResults(BATCH)
                .getResultList())
                .flatMap(rows -> send(rows).replaceWith(rows))
                .flatMap(rows -> rows.isEmpty() ? Uni.createFrom().item(0)
                        : session.createMutationQuery("delete from OutboxEntity where id in :ids")
                                .setParameter("ids", rows.stream().map(r -> r.id).toList())
                                .executeUpdate()));
    }

    /**
     * Hands the whole batch to the producer at once, oldest first, and waits for every acknowledgement:
     * the idempotent producer keeps each partition's records in the order they were handed over, so
     * waiting for one acknowledgement before sending the next (as this did) only cost a round trip each.
     */
    private Uni<Void> send(List<OutboxEntity> rows) {
        if (rows.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Uni<Void>> sends = new java.util.ArrayList<>(rows.size());
        for (OutboxEntity row : rows) {
            // a traced record is sent in a span of its own, whose context the record carries to its reader
            Span span = Spans.childIfTraced(tracer, row.topic + " publish", Traceparent.parent(row.traceparent),
                    SpanKind.PRODUCER, "messaging.system", "kafka", "messaging.destination.name", row.topic,
                    row.topic.equals(Topics.NODE_COMMANDS.name()) ? LogFields.NODE_ID : LogFields.JOB_ID, row.recordKey);
            sends.add(emitter.send(toRecord(row, span)).onItemOrFailure().invoke((ok, f) -> Spans.end(span, f)));
        }
        return Uni.join().all(sends).andCollectFailures()
                .onFailure().invoke(f -> LOG.warnf("outbox: publish failed, will retry: %s", f.getMessage()))
                .replaceWithVoid();
    }

    private ProducerRecord<String, byte[]> toRecord(OutboxEntity row, Span span) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(row.topic, row.recordKey, row.payload);
        CloudEventHeaders.write(record.headers(), new CloudEvent(row.ceId, row.ceType, source, row.ceTime));
        TraceHeaders.inject(io.opentelemetry.context.Context.root().with(span), record.headers());
        return record;
    }
}
