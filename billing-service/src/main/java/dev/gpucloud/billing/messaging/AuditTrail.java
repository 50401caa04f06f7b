package dev.gpucloud.billing.messaging;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.kafka.AuditPublisher;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;
import org.jboss.logging.Logger;

/**
 * Publishes the audit record of every request that changes something (a catalog price, an invoice closed early,
 * a manual adjustment) on {@code audit.events}.
 * Auditing never holds up or fails a request: a record is handed to the producer and not waited for; while the
 * broker is slow or away records wait in a bounded buffer, and what does not fit is dropped with a warning that
 * counts it.
 */
@ApplicationScoped
public class AuditTrail {

    private static final Logger LOG = Logger.getLogger(AuditTrail.class);

    private final AuditPublisher publisher;

    public AuditTrail(@Channel("audit-out") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
            Emitter<ProducerRecord<String, byte[]>> emitter,
            @ConfigProperty(name = "quarkus.application.name") String source) {
        this.publisher = new AuditPublisher(emitter::send, source, LOG::warnf);
    }

    /** Sends {@code event} without waiting for the broker. */
    public void record(AuditEvent event) {
        publisher.record(event);
    }
}
