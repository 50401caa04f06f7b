package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
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

/**
 * Shows on a running stack that an agent cannot speak for a host it is not enrolled for: as the agent's login
 * and with its own enrolment credential, it sends one harmless node event (a heartbeat lost) about
 * {@code HOST}, then, as the broker's admin, waits for that event in {@code node.events.dlq} and prints the
 * reason the reader that refused it gave ({@link Enrolment}).
 *
 * <p>Run as {@code java ... EnrolmentProbe BOOTSTRAP AGENT_CONFIG CREDENTIAL ADMIN_CONFIG HOST}; exits 0 when
 * a reader refused the event, 1 when none did within 30 seconds.
 */
public final class EnrolmentProbe {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private EnrolmentProbe() {
    }

    /** The refusal's reason, or {@code null} when no reader refused the event in time. */
    public static String impersonate(String bootstrap, Properties agentLogin, Path credential, Properties admin,
            String host) throws Exception {
        String dlq = Topics.NODE_EVENTS.deadLetterTopic();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(client(bootstrap, admin),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(dlq).stream()
                    .map(p -> new TopicPartition(dlq, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // the end now, before the event is sent

            Properties producerProps = client(bootstrap, agentLogin);
            producerProps.put(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, EnrolmentSigner.class.getName());
            producerProps.put(EnrolmentSigner.CREDENTIAL_CONFIG, credential.toString());
            CloudEvent event = CloudEvent.create(Topics.NODE_EVENTS.eventType(), Enrolment.SOURCE_PREFIX + host,
                    Instant.now());
            try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProps, new StringSerializer(),
                    new ByteArraySerializer())) {
                producer.send(nodeEvent(host, event)).get(30, TimeUnit.SECONDS);
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> dead : consumer.poll(Duration.ofMillis(500))) {
                    if (event.id().equals(header(dead, CloudEventHeaders.ID))) {
                        return header(dead, "dead-letter-reason");
                    }
                }
            }
            return null;
        }
    }

    /**
     * The node event, encoded here with plain Jackson: this runs on the broker's own classpath (kafka.sh), which
     * has no Java-time module for {@link EventRecords#record}; the JSON is the one {@code NodeEvent} reads.
     */
    static ProducerRecord<String, byte[]> nodeEvent(String host, CloudEvent event) throws Exception {
        Map<String, Object> payload = new java.util.LinkedHashMap<>();
        payload.put("nodeId", host);
        payload.put("type", NodeEventType.HEARTBEAT_LOST.name());
        payload.put("occurredAt", event.time().toString());
        payload.put("detail", "enrolment probe: an agent speaking for a host that is not its own");
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(Topics.NODE_EVENTS.name(), host,
                new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsBytes(payload));
        CloudEventHeaders.write(record.headers(), event);
        return record;
    }

    private static Properties client(String bootstrap, Properties login) {
        Properties props = new Properties();
        props.putAll(login);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "gpucloud-enrolment-probe");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return props;
    }

    private static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: EnrolmentProbe BOOTSTRAP AGENT_CONFIG CREDENTIAL ADMIN_CONFIG HOST");
            System.exit(2);
        }
        String reason = impersonate(args[0], KafkaAccess.clientConfig(Path.of(args[1])), Path.of(args[2]),
                KafkaAccess.clientConfig(Path.of(args[3])), args[4]);
        if (reason == null) {
            System.out.println("not refused by any reader within " + WAIT.toSeconds() + " s");
            System.exit(1);
        }
        System.out.println("refused by a reader: " + reason);
        System.exit(0);
    }
}
