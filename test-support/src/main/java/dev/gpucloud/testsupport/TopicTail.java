package dev.gpucloud.testsupport;

import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topic;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads one topic for a test, without a consumer group, from a position fixed when it opens; the broker
 * is shared with every other test, so a tail never assumes the topic is empty and tests filter by their
 * own keys. Every record read is kept: {@link #until} and {@link #matching} look at all of them, while
 * {@link #next} hands each record out once.
 */
public final class TopicTail implements AutoCloseable {

    /** The header in which a service says why it dead-lettered a record. */
    public static final String DEAD_LETTER_REASON = "dead-letter-reason";

    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(30);

    private final String topic;
    private final KafkaConsumer<String, byte[]> consumer;
    private final List<ConsumerRecord<String, byte[]>> seen = new ArrayList<>();
    private int handedOut;
    private boolean closed;

    TopicTail(String bootstrap, String topic, boolean fromEnd) {
        this.topic = topic;
        consumer = new KafkaConsumer<>(Map.<String, Object>of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"),
                new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = consumer.partitionsFor(topic, METADATA_TIMEOUT).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        if (fromEnd) {
            consumer.seekToEnd(partitions);
        } else {
            consumer.seekToBeginning(partitions);
        }
        // Seeks are lazy: asking for each position fixes it now, before the test sends anything.
        partitions.forEach(consumer::position);
    }

    /**
     * Reads on until the records seen so far that match {@code filter} satisfy {@code done}, and returns
     * those; fails the test if they do not within {@code timeout}.
     */
    public List<ConsumerRecord<String, byte[]>> until(Predicate<ConsumerRecord<String, byte[]>> filter,
            Predicate<List<ConsumerRecord<String, byte[]>>> done, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            poll(POLL);
            List<ConsumerRecord<String, byte[]>> matching = matching(filter);
            if (done.test(matching)) {
                return matching;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError(topic + ": after " + timeout + " the " + matching.size()
                        + " matching records (keys " + matching.stream().map(ConsumerRecord::key).toList()
                        + ") still do not satisfy the condition");
            }
        }
    }

    /**
     * Reads on until {@code count} records that match and that no earlier call handed out have arrived, or
     * {@code timeout} has passed; returns all such records read, which may be fewer or more than {@code count}.
     */
    public List<ConsumerRecord<String, byte[]>> next(Predicate<ConsumerRecord<String, byte[]>> match, int count,
            Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (notHandedOut(match).size() < count && System.nanoTime() - deadline < 0) {
            poll(POLL);
        }
        List<ConsumerRecord<String, byte[]>> found = notHandedOut(match);
        handedOut = seen.size();
        return found;
    }

    /** The records read so far that match {@code filter}, in the order read. */
    public List<ConsumerRecord<String, byte[]>> matching(Predicate<ConsumerRecord<String, byte[]>> filter) {
        return seen.stream().filter(filter).toList();
    }

    /** Reads whatever has arrived by now. */
    public void drain() {
        poll(Duration.ofMillis(500));
    }

    private List<ConsumerRecord<String, byte[]>> notHandedOut(Predicate<ConsumerRecord<String, byte[]>> match) {
        return seen.subList(handedOut, seen.size()).stream().filter(match).toList();
    }

    private void poll(Duration timeout) {
        consumer.poll(timeout).forEach(seen::add);
    }

    /** One header of a record as text, or null when the record has no such header. */
    public static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** Why a service dead-lettered the record, from its {@value #DEAD_LETTER_REASON} header. */
    public static String deadLetterReason(ConsumerRecord<?, ?> record) {
        return header(record, DEAD_LETTER_REASON);
    }

    /** The record's value decoded as the topic's payload; its CloudEvents headers are not checked. */
    public static <T> T decode(Topic<T> topic, ConsumerRecord<String, byte[]> record) {
        return EventCodec.decode(topic, record.value());
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            consumer.close(Duration.ofSeconds(5));
        }
    }
}
