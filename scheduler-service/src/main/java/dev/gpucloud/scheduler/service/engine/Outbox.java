package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.OutboxEntity;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * The transactional outbox: records are written with the change they announce and published after
 * the commit, oldest first; a row is deleted only once the broker has acknowledged it. A crash or a
 * broker outage delays records, never loses them; a record may be sent twice, and consumers drop the
 * repeat by its ce_id.
 */
@ApplicationScoped
public class Outbox {

    private static final Logger LOG = Logger.getLogger(Outbox.class);
    private static final int BATCH = 200;

    private final MutinyEmitter<ProducerRecord<String, byte[]>> emitter;
    private final String source;

    public Outbox(@Channel("events-out") MutinyEmitter<ProducerRecord<String, byte[]>> emitter, SchedulerConfig config) {
        this.emitter = emitter;
        this.source = config.source();
    }

    /** Adds a record to the session's transaction. */
    public <T> Uni<Void> add(Mutiny.Session session, Topic<T> topic, String key, T payload) {
        CloudEvent event = CloudEvent.create(topic.eventType(), source, Instant.now());
        OutboxEntity row = new OutboxEntity();
        row.topic = topic.name();
        row.recordKey = key;
        row.payload = EventCodec.encode(payload);
        row.ceId = event.id();
        row.ceType = event.type();
        row.ceTime = event.time();
        return session.persist(row);
    }

    /** Publishes what is waiting, in order; call it through the SerialExecutor. */
    public Uni<Integer> publish(Mutiny.SessionFactory sessions) {
        return sessions.withTransaction(session -> session
                .createSelectionQuery("from OutboxEntity order by id", OutboxEntity.class)
                .setMaxResults(BATCH)
                .getResultList()
                .flatMap(rows -> send(rows).replaceWith(rows))
                .flatMap(rows -> rows.isEmpty() ? Uni.createFrom().item(0)
                        : session.createMutationQuery("delete from OutboxEntity where id in :ids")
                                .setParameter("ids", rows.stream().map(r -> r.id).toList())
                                .executeUpdate()));
    }

    private Uni<Void> send(List<OutboxEntity> rows) {
        return Multi.createFrom().iterable(rows)
                .onItem().transformToUniAndConcatenate(row -> emitter.send(toRecord(row)))
                .collect().last()
                .onFailure().invoke(f -> LOG.warnf("outbox: publish failed, will retry: %s", f.getMessage()))
                .replaceWithVoid();
    }

    private ProducerRecord<String, byte[]> toRecord(OutboxEntity row) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(row.topic, row.recordKey, row.payload);
        CloudEventHeaders.write(record.headers(), new CloudEvent(row.ceId, row.ceType, source, row.ceTime));
        return record;
    }
}
