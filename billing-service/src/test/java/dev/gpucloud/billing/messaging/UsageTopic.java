package dev.gpucloud.billing.messaging;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.RawRecords;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The real usage.events topic as a test drives it: usage builders with unique ids (the broker is shared
 * with every other module's tests), senders of good and hostile records, and its dead-letter topic.
 */
final class UsageTopic implements AutoCloseable {

    static final String SOURCE = "billing-service-test";

    private final TestKafka kafka = new TestKafka();

    /** A tenant, job or allocation id no other test run uses. */
    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static UsageEvent usage(String tenant, String job, String allocation, Instant from, Instant to, Sku sku,
            int units, CapacityType capacityType) {
        return new UsageEvent(allocation, job, tenant, "node-test-1", from, to, sku, units, capacityType, "us-east-1a");
    }

    /** Sends a usage event under a fresh ce_id; returns that id. */
    String send(UsageEvent usage) {
        CloudEvent event = CloudEvent.create(Topics.USAGE_EVENTS.eventType(), SOURCE, Instant.now());
        send(usage, event);
        return event.id();
    }

    /** Sends a usage event under the given CloudEvent (a redelivery reuses one). */
    void send(UsageEvent usage, CloudEvent event) {
        sendRaw(EventRecords.record(Topics.USAGE_EVENTS, usage.allocationId(), usage, event));
    }

    /** Sends any record, as a careless or hostile producer would. */
    void sendRaw(ProducerRecord<String, byte[]> record) {
        kafka.send(record);
    }

    /** A usage.events record whose value is this JSON text, without CloudEvents headers. */
    static ProducerRecord<String, byte[]> raw(String key, String json) {
        return RawRecords.record(Topics.USAGE_EVENTS.name(), key, json);
    }

    /** The record with fresh, valid CloudEvents headers of a usage event. */
    static ProducerRecord<String, byte[]> withHeaders(ProducerRecord<String, byte[]> record) {
        return RawRecords.withHeaders(record, Topics.USAGE_EVENTS, SOURCE);
    }

    /** A reader of usage.events.dlq that sees only what is dead-lettered from now on. */
    TopicTail deadLetters() {
        return kafka.deadLetters(Topics.USAGE_EVENTS);
    }

    @Override
    public void close() {
        kafka.close();
    }
}
