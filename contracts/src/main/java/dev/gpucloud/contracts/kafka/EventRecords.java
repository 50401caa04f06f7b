package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.EventTimes;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Topic;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Turns payloads into Kafka records with CloudEvents headers, and records back into envelopes. */
public final class EventRecords {

    private EventRecords() {
    }

    /** A record for {@code topic}, keyed by {@code key}, with a fresh unique {@code ce_id}. */
    public static <T> ProducerRecord<String, byte[]> record(Topic<T> topic, String key, T payload, String source) {
        return record(topic, key, payload, CloudEvent.create(topic.eventType(), source, Instant.now()));
    }

    /** A record with given CloudEvents attributes (a retry reuses its event's id). */
    public static <T> ProducerRecord<String, byte[]> record(Topic<T> topic, String key, T payload, CloudEvent event) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic.name(), key, EventCodec.encode(payload));
        CloudEventHeaders.write(record.headers(), event);
        return record;
    }

    /** A tombstone for a compacted topic: the key's value is gone. */
    public static ProducerRecord<String, byte[]> tombstone(Topic<?> topic, String key, String source) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic.name(), key, null);
        CloudEventHeaders.write(record.headers(), CloudEvent.create(topic.eventType(), source, Instant.now()));
        return record;
    }

    /**
     * The dead letter of a consumed record, as SmallRye's dead-letter-queue strategy writes it, for
     * consumers that take records in batches and so cannot fail one record alone: same key, value and
     * headers, to {@code dlqTopic}, plus {@code dead-letter-reason}, {@code dead-letter-topic},
     * {@code dead-letter-partition} and {@code dead-letter-offset}.
     */
    public static ProducerRecord<String, byte[]> deadLetter(ConsumerRecord<String, byte[]> record, String dlqTopic,
            String reason) {
        org.apache.kafka.common.header.internals.RecordHeaders headers =
                new org.apache.kafka.common.header.internals.RecordHeaders(record.headers().toArray());
        headers.add("dead-letter-reason", utf8(reason == null ? "" : reason));
        headers.add("dead-letter-topic", utf8(record.topic()));
        headers.add("dead-letter-partition", utf8(String.valueOf(record.partition())));
        headers.add("dead-letter-offset", utf8(String.valueOf(record.offset())));
        return new ProducerRecord<>(dlqTopic, null, record.key(), record.value(), headers);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Decodes a consumed record. A record without a key, without its CloudEvents headers, of another
     * {@code ce_type} than the topic's, whose payload is malformed or whose times are out of the limits
     * table's range (see {@link EventTimes}) is a {@link MalformedEventException} that names the topic and
     * the field.
     */
    public static <T> Envelope<T> decode(Topic<T> topic, ConsumerRecord<String, byte[]> record) {
        return decode(topic, record, Instant.now());
    }

    /**
     * As {@link #decode(Topic, ConsumerRecord)}, with the receiver's clock passed in. Where this process has an
     * enrolment key ({@link Enrolment#configuredVerifier()}), a record of an agents' topic must also be signed by
     * an agent enrolled for the host it is about.
     */
    public static <T> Envelope<T> decode(Topic<T> topic, ConsumerRecord<String, byte[]> record, Instant now) {
        return decode(topic, record, now, Enrolment.configuredVerifier());
    }

    /** As {@link #decode(Topic, ConsumerRecord, Instant)}, checking agents' signatures with {@code enrolment}
     * (none when null). */
    public static <T> Envelope<T> decode(Topic<T> topic, ConsumerRecord<String, byte[]> record, Instant now,
            Enrolment.Verifier enrolment) {
        if (record.key() == null || record.key().isBlank()) {
            throw new MalformedEventException(topic.name() + ": record has no key (expected " + topic.key() + ")");
        }
        CloudEvent event;
        try {
            event = CloudEventHeaders.read(record.headers());
            Check.text(record.key(), Limits.ID, "key");
            Check.text(event.id(), Limits.ID, CloudEventHeaders.ID);
            Check.eventTime(event.time(), now, CloudEventHeaders.TIME);
        } catch (MalformedEventException | IllegalArgumentException e) {
            throw new MalformedEventException(topic.name() + ": " + e.getMessage());
        }
        if (!topic.eventType().equals(event.type())) {
            throw new MalformedEventException(topic.name() + ": header '" + CloudEventHeaders.TYPE + "' must be '"
                    + topic.eventType() + "', was '" + Check.clip(event.type()) + "'");
        }
        T payload = EventCodec.decode(topic, record.value());
        if (enrolment != null && Enrolment.signedByAgents(topic.name())) {
            enrolment.check(record, event.source(), Enrolment.nodeIdOf(payload, record.key()));
        }
        try {
            EventTimes.check(payload, now);
        } catch (IllegalArgumentException e) {
            throw new MalformedEventException(topic.name() + ": " + e.getMessage());
        }
        return new Envelope<>(record.key(), event, payload);
    }
}
