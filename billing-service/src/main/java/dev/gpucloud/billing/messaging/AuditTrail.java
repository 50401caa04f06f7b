package dev.gpucloud.billing.messaging;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;
import org.jboss.logging.Logger;

/**
 * Publishes the audit record of every request that changes something (a catalog price) on {@code audit.events}.
 * Auditing never holds up or fails a request: a record is handed to the producer and not waited for; while the
 * broker is slow or away records wait in a bounded buffer, and what does not fit is dropped with a warning that
 * counts it.
 */
@ApplicationScoped
public class AuditTrail {

    private static final Logger LOG = Logger.getLogger(AuditTrail.class);

    private final Emitter<ProducerRecord<String, byte[]>> emitter;
    private final String source;
    private final AtomicLong dropped = new AtomicLong();

    public AuditTrail(@Channel("audit-out") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 4096)
            Emitter<ProducerRecord<String, byte[]>> emitter,
            @ConfigProperty(name = "quarkus.application.name") String source) {
        this.emitter = emitter;
        this.source = source;
    }

    /** Sends {@code event} without waiting for the broker. */
    public void record(AuditEvent event) {
        try {
            emitter.send(EventRecords.record(Topics.AUDIT_EVENTS, event.key(), event, source))
                    .whenComplete((ok, failure) -> {
                        if (failure != null) {
                            lost(event, failure.getMessage());
                        }
                    });
        } catch (RuntimeException full) { // the buffer is full, or the channel is not up yet
            lost(event, full.getMessage());
        }
    }

    private void lost(AuditEvent event, String why) {
        LOG.warnf("audit: a record of %s by %s (%s) was not published (%d so far): %s", event.action(),
                event.subject(), event.result(), dropped.incrementAndGet(), why);
    }
}
