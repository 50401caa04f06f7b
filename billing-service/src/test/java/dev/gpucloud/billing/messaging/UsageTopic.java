package dev.gpucloud.billing.messaging;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The real usage.events topic as a test drives it: a plain producer, usage builders with unique ids (the
 * broker is shared with every other module's tests), and a reader of the dead-letter topic that starts at
 * its current end, so it only sees what this test caused.
 */
final class UsageTopic implements AutoCloseable {

    static final String SOURCE = "billing-service-test";

    private final String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
    private final KafkaProducer<String, byte[]> producer;

    UsageTopic() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(props);
    }

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

    void sendRaw(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot send to " + record.topic() + " at " + bootstrap, e);
        }
    }

    static ProducerRecord<String, byte[]> raw(String key, String json) {
        return new ProducerRecord<>(Topics.USAGE_EVENTS.name(), key, json.getBytes(StandardCharsets.UTF_8));
    }

    /** A consumer of usage.events.dlq positioned at its end now. */
    DeadLetters deadLetters() {
        return new DeadLetters();
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }

    /** Reads what lands on the dead-letter topic after it was opened. */
    final class DeadLetters implements AutoCloseable {
        private final KafkaConsumer<String, byte[]> consumer;
        private final List<ConsumerRecord<String, byte[]>> seen = new ArrayList<>();

        private DeadLetters() {
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            consumer = new KafkaConsumer<>(props);
            String topic = Topics.USAGE_EVENTS.deadLetterTopic();
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            ends.forEach(consumer::seek);
        }

        /** Every dead letter with this key seen so far, after one more poll. */
        List<ConsumerRecord<String, byte[]>> withKey(String key) {
            consumer.poll(Duration.ofMillis(500)).forEach(seen::add);
            return seen.stream().filter(r -> key.equals(r.key())).toList();
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
