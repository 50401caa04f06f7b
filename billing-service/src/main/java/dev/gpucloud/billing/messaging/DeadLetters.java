package dev.gpucloud.billing.messaging;

import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.jboss.logging.Logger;

/**
 * Writes refused usage records to {@code usage.events.dlq} as SmallRye's dead-letter-queue strategy does (same
 * key, value and headers, plus {@code dead-letter-reason}, {@code dead-letter-topic}, {@code -partition} and
 * {@code -offset}), for the batch consumer, which cannot fail single records of a batch.
 */
@ApplicationScoped
public class DeadLetters {

    private static final Logger LOG = Logger.getLogger(DeadLetters.class);

    private final MutinyEmitter<ProducerRecord<String, byte[]>> emitter;
    private final MeterRegistry registry;

    public DeadLetters(@Channel("events-out") MutinyEmitter<ProducerRecord<String, byte[]>> emitter,
            MeterRegistry registry) {
        this.emitter = emitter;
        this.registry = registry;
    }

    /** Sends them all; completes when the broker acknowledged every one. */
    Uni<Void> send(List<DeadLetter> dead) {
        if (dead.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Uni<Void>> sends = new ArrayList<>();
        for (DeadLetter letter : dead) {
            var record = letter.record();
            String dlq = Topics.USAGE_EVENTS.deadLetterTopic();
            LOG.warnf("dead-lettering %s-%d@%d to %s: %s", record.topic(), record.partition(), record.offset(), dlq,
                    letter.reason());
            registry.counter("gpucloud.billing.usage.events", "outcome", "dead-letter").increment();
            sends.add(emitter.send(EventRecords.deadLetter(record, dlq, letter.reason())));
        }
        return Uni.join().all(sends).andFailFast().replaceWithVoid();
    }
}
