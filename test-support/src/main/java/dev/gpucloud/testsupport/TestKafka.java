package dev.gpucloud.testsupport;

import dev.gpucloud.contracts.events.Topic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * A test's own plain Kafka client on the broker the test application uses, as any other producer or
 * consumer of gpucloud's topics would be; closing it closes the tails it opened.
 */
public final class TestKafka implements AutoCloseable {

    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(30);

    private final String bootstrap;
    private final KafkaProducer<String, byte[]> producer;
    private final List<TopicTail> tails = new ArrayList<>();

    /** A client on the broker that MicroProfile Config's {@code kafka.bootstrap.servers} names. */
    public TestKafka() {
        bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
        producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
    }

    /** Sends a record and waits until every in-sync replica has it, so it is on the topic when this returns. */
    public void send(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get(ACK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending to " + record.topic(), e);
        } catch (Exception e) {
            throw new IllegalStateException("cannot send to " + record.topic() + " at " + bootstrap, e);
        }
    }

    /** A reader of the topic that sees only what is written after this call. */
    public TopicTail tail(String topic) {
        return open(new TopicTail(bootstrap, topic, true));
    }

    /** A reader of the topic from the oldest record the broker still keeps. */
    public TopicTail tailFromBeginning(String topic) {
        return open(new TopicTail(bootstrap, topic, false));
    }

    /** A reader of the topic's dead-letter topic that sees only the records dead-lettered after this call. */
    public TopicTail deadLetters(Topic<?> topic) {
        return tail(topic.deadLetterTopic());
    }

    private TopicTail open(TopicTail tail) {
        tails.add(tail);
        return tail;
    }

    @Override
    public void close() {
        tails.forEach(TopicTail::close);
        producer.close(Duration.ofSeconds(10));
    }
}
