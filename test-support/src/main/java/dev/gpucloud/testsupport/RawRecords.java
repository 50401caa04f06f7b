package dev.gpucloud.testsupport;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Records as a careless or hostile producer writes them, which the contracts' {@code EventRecords} refuse
 * to build: any value, with or without CloudEvents headers.
 */
public final class RawRecords {

    private RawRecords() {
    }

    /** A record whose value is the text in UTF-8 (a tombstone when null), without CloudEvents headers. */
    public static ProducerRecord<String, byte[]> record(String topic, String key, String value) {
        return new ProducerRecord<>(topic, key, bytes(value));
    }

    /** A record for one partition whose value is the text in UTF-8 (a tombstone when null), without headers. */
    public static ProducerRecord<String, byte[]> record(String topic, int partition, String key, String value) {
        return new ProducerRecord<>(topic, partition, key, bytes(value));
    }

    /** A copy of the record with fresh CloudEvents headers of the topic's event type, from {@code source}. */
    public static ProducerRecord<String, byte[]> withHeaders(ProducerRecord<String, byte[]> record, Topic<?> topic,
            String source) {
        ProducerRecord<String, byte[]> copy = withValue(record, record.value());
        CloudEventHeaders.write(copy.headers(), CloudEvent.create(topic.eventType(), source, Instant.now()));
        return copy;
    }

    /** A copy of the record, its headers included, with another value: a bad body behind valid headers. */
    public static ProducerRecord<String, byte[]> withValue(ProducerRecord<String, byte[]> record, byte[] value) {
        ProducerRecord<String, byte[]> copy = new ProducerRecord<>(record.topic(), record.partition(), record.key(),
                value);
        record.headers().forEach(h -> copy.headers().add(h));
        return copy;
    }

    /** A copy of the record, its headers included, whose value is the text in UTF-8 (a tombstone when null). */
    public static ProducerRecord<String, byte[]> withValue(ProducerRecord<String, byte[]> record, String value) {
        return withValue(record, bytes(value));
    }

    private static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }
}
