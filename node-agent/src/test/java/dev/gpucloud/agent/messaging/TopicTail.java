package dev.gpucloud.agent.messaging;

import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topic;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads one topic for a test, without a consumer group: from its current end (what is sent from now
 * on) or from its beginning. Never assumes the topic is empty: tests filter by their own keys.
 */
final class TopicTail implements AutoCloseable {

    private final KafkaConsumer<String, byte[]> consumer;
    private final List<ConsumerRecord<String, byte[]>> seen = new ArrayList<>();

    private TopicTail(String bootstrap, String topic, boolean fromEnd) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        if (fromEnd) {
            consumer.seekToEnd(partitions);
        } else {
            consumer.seekToBeginning(partitions);
        }
        partitions.forEach(consumer::position);
    }

    static TopicTail fromEnd(String bootstrap, String topic) {
        return new TopicTail(bootstrap, topic, true);
    }

    static TopicTail fromBeginning(String bootstrap, String topic) {
        return new TopicTail(bootstrap, topic, false);
    }

    /** Reads on until the records seen so far that match {@code filter} satisfy {@code done}; returns those. */
    List<ConsumerRecord<String, byte[]>> until(Predicate<ConsumerRecord<String, byte[]>> filter,
            Predicate<List<ConsumerRecord<String, byte[]>>> done, Duration timeout) {
        await().atMost(timeout).pollInterval(Duration.ofMillis(10)).until(() -> {
            consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
            return done.test(matching(filter));
        });
        return matching(filter);
    }

    List<ConsumerRecord<String, byte[]>> matching(Predicate<ConsumerRecord<String, byte[]>> filter) {
        return seen.stream().filter(filter).toList();
    }

    /** Reads whatever has arrived by now. */
    void drain() {
        consumer.poll(Duration.ofMillis(500)).forEach(seen::add);
    }

    static <T> T decode(Topic<T> topic, ConsumerRecord<String, byte[]> record) {
        return EventCodec.decode(topic, record.value());
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
