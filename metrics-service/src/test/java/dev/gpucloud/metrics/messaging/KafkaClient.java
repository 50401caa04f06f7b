package dev.gpucloud.metrics.messaging;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
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

/** A plain producer and dead-letter reader on the shared broker: other engineers' records are there too. */
final class KafkaClient implements AutoCloseable {

    private final String bootstrap;
    private final KafkaProducer<String, byte[]> producer;

    KafkaClient(String bootstrap) {
        this.bootstrap = bootstrap;
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        producer = new KafkaProducer<>(props);
    }

    void send(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot send to " + record.topic(), e);
        }
    }

    /** Where each partition of a topic ends now: records after this were written by this test. */
    Map<TopicPartition, Long> endOffsets(String topic) {
        try (KafkaConsumer<String, byte[]> consumer = consumer()) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return new HashMap<>(consumer.endOffsets(partitions, Duration.ofSeconds(30)));
        }
    }

    /** Reads a topic from the given offsets until a record for each key has been seen, or the timeout. */
    Map<String, ConsumerRecord<String, byte[]>> readUntilKeys(Map<TopicPartition, Long> from, Set<String> keys,
            Duration timeout) {
        Map<String, ConsumerRecord<String, byte[]>> found = new HashMap<>();
        try (KafkaConsumer<String, byte[]> consumer = consumer()) {
            consumer.assign(from.keySet());
            from.forEach(consumer::seek);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (found.size() < keys.size() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.key() != null && keys.contains(record.key())) {
                        found.put(record.key(), record);
                    }
                }
            }
        }
        return found;
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private KafkaConsumer<String, byte[]> consumer() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(props);
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(10));
    }
}
