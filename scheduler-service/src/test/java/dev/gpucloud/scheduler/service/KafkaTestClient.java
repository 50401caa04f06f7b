package dev.gpucloud.scheduler.service;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;

/** A plain Kafka producer and consumers on the broker the test application uses. */
final class KafkaTestClient implements AutoCloseable {

    private final String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
    private final KafkaProducer<String, byte[]> producer;

    KafkaTestClient() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(p);
    }

    void send(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get();
        } catch (Exception e) {
            throw new IllegalStateException("cannot send to " + record.topic(), e);
        }
    }

    void sendRaw(String topic, String key, String value) {
        send(new ProducerRecord<>(topic, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
    }

    /** A consumer at the end of a topic, so it sees only what comes after. */
    KafkaConsumer<String, byte[]> tail(String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p);
        consumer.subscribe(List.of(topic));
        long until = System.currentTimeMillis() + 15_000;
        while (consumer.assignment().isEmpty() && System.currentTimeMillis() < until) {
            consumer.poll(Duration.ofMillis(100));
        }
        consumer.seekToEnd(consumer.assignment());
        consumer.assignment().forEach(consumer::position);
        return consumer;
    }

    /** Polls until a record matches or the time is up; returns all matching records seen. */
    static List<ConsumerRecord<String, byte[]>> await(KafkaConsumer<String, byte[]> consumer,
            Predicate<ConsumerRecord<String, byte[]>> match, int count, Duration timeout) {
        List<ConsumerRecord<String, byte[]>> found = new ArrayList<>();
        long until = System.currentTimeMillis() + timeout.toMillis();
        while (found.size() < count && System.currentTimeMillis() < until) {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                if (match.test(r)) {
                    found.add(r);
                }
            }
        }
        return found;
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        var h = record.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        producer.close();
    }
}
