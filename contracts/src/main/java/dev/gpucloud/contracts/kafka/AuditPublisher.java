package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.Topics;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Hands audit records to a service's {@code audit.events} channel without waiting for the broker: a record that
 * cannot be sent (the channel's buffer is full, the channel is not up, the broker refused it) is counted and
 * reported, never thrown, so auditing neither holds up nor fails the call it records.
 */
public final class AuditPublisher {

    private final Function<ProducerRecord<String, byte[]>, CompletionStage<Void>> send;
    private final String source;
    private final BiConsumer<String, Object[]> warn;
    private final AtomicLong dropped = new AtomicLong();

    /**
     * @param send   the channel's emitter
     * @param source the CloudEvents source of the records (the service)
     * @param warn   a log's warnf
     */
    public AuditPublisher(Function<ProducerRecord<String, byte[]>, CompletionStage<Void>> send, String source,
            BiConsumer<String, Object[]> warn) {
        this.send = send;
        this.source = source;
        this.warn = warn;
    }

    /** Sends {@code event} without waiting for the broker. */
    public void record(AuditEvent event) {
        try {
            send.apply(EventRecords.record(Topics.AUDIT_EVENTS, event.key(), event, source))
                    .whenComplete((ok, failure) -> {
                        if (failure != null) {
                            lost(event, failure.getMessage());
                        }
                    });
        } catch (RuntimeException full) { // the buffer is full, or the channel is not up yet
            lost(event, full.getMessage());
        }
    }

    /** How many records were not published so far. */
    public long dropped() {
        return dropped.get();
    }

    private void lost(AuditEvent event, String why) {
        warn.accept("audit: a record of %s by %s (%s) was not published (%d so far): %s",
                new Object[] {event.action(), event.subject(), event.result(), dropped.incrementAndGet(), why});
    }
}
