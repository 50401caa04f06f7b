package dev.gpucloud.agent.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.agent.messaging.SpoolRecords;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.CloudEventHeaders;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The spool across a real broker outage. The test starts a private Kafka broker of its own
 * (deploy/local/kafka.sh on free ports with its own data dir; the shared broker is never touched),
 * stops it while events are being produced, restarts the agent's spool while the broker is down,
 * starts the broker again, and checks that every event produced arrived, byte for byte, with its
 * ce_id. A duplicate is allowed only as an exact copy (same ce_id): consumers deduplicate by ce_id.
 */
class SpoolOutageTest {

    private static final Path KAFKA_SH = Path.of("..", "deploy", "local", "kafka.sh").toAbsolutePath().normalize();
    private static Path runDir;
    private static int port;
    private static int controllerPort;

    @BeforeAll
    static void startPrivateBroker() throws Exception {
        runDir = Files.createTempDirectory("spool-outage-kafka");
        port = freePort();
        controllerPort = freePort();
        kafka("start");
    }

    @AfterAll
    static void stopPrivateBroker() throws Exception {
        if (runDir != null) {
            kafka("stop");
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void kafka(String action) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder("bash", KAFKA_SH.toString(), action).redirectErrorStream(true)
                .redirectOutput(runDir.resolve("kafka-" + action + ".out").toFile());
        builder.environment().put("KAFKA_PORT", Integer.toString(port));
        builder.environment().put("KAFKA_CONTROLLER_PORT", Integer.toString(controllerPort));
        builder.environment().put("GPUCLOUD_RUN_DIR", runDir.toString());
        builder.environment().put("KAFKA_HEAP", "256m");
        Process process = builder.start();
        if (!process.waitFor(90, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IllegalStateException("kafka.sh " + action + " failed: "
                    + Files.readString(runDir.resolve("kafka-" + action + ".out")));
        }
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + port);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "4000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "1500");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "2000");
        props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        return new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    private static SpoolSink sink(KafkaProducer<String, byte[]> producer) {
        return record -> {
            CompletableFuture<Void> done = new CompletableFuture<>();
            try {
                producer.send(SpoolRecords.producerRecord(record), (meta, e) -> {
                    if (e == null) {
                        done.complete(null);
                    } else {
                        done.completeExceptionally(e);
                    }
                });
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
            return done;
        };
    }

    private static SpooledRecord event(int n) {
        AllocationEvent event = new AllocationEvent("alloc-" + n, "job-" + (n % 7), "node-1",
                AllocationEventType.CHECKPOINT_SAVED, Instant.parse("2026-01-01T00:00:00Z").plusMillis(n), null,
                "/ckpt/" + n, "event " + n);
        return SpoolRecords.spooled(EventRecords.record(Topics.ALLOCATION_EVENTS, event.jobId(), event, "/node-agent/node-1"));
    }

    @Test
    void everyEventArrivesAcrossABrokerOutageAndAnAgentRestart() throws Exception {
        Path spoolDir = Files.createTempDirectory("spool-outage");
        List<SpooledRecord> produced = new ArrayList<>();
        KafkaProducer<String, byte[]> producer = producer();
        SpoolSender sender = new SpoolSender(new Spool(spoolDir, true), sink(producer), 200, Duration.ofSeconds(10),
                Duration.ofSeconds(1), System.out::println).start();
        int n = 0;
        for (; n < 100; n++) {
            produced.add(event(n));
            sender.submit(List.of(produced.get(n)));
        }
        assertThat(sender.awaitEmpty(Duration.ofSeconds(30))).as("sent while the broker is up").isTrue();

        kafka("stop");
        for (; n < 200; n++) {
            produced.add(event(n));
            sender.submit(List.of(produced.get(n)));
            Thread.sleep(10);
        }
        Thread.sleep(3000);
        assertThat(sender.pending()).as("held in the spool during the outage").isEqualTo(100);
        // The agent restarts while the broker is still down: a new spool on the same directory.
        sender.close();
        producer.close(Duration.ofSeconds(1));
        producer = producer();
        sender = new SpoolSender(new Spool(spoolDir, true), sink(producer), 200, Duration.ofSeconds(10),
                Duration.ofSeconds(1), System.out::println).start();
        assertThat(sender.pending()).as("replayed from disk").isEqualTo(100);
        for (; n < 250; n++) {
            produced.add(event(n));
            sender.submit(List.of(produced.get(n)));
        }

        kafka("start");
        for (; n < 300; n++) {
            produced.add(event(n));
            sender.submit(List.of(produced.get(n)));
        }
        assertThat(sender.awaitEmpty(Duration.ofSeconds(60))).as("everything sent once the broker is back").isTrue();
        sender.close();
        producer.close(Duration.ofSeconds(5));

        Map<String, SpooledRecord> arrived = new HashMap<>();
        int duplicates = 0;
        for (ConsumerRecord<String, byte[]> record : readAll(Topics.ALLOCATION_EVENTS.name())) {
            SpooledRecord got = new SpooledRecord(record.topic(), record.key(), headers(record), record.value());
            String id = got.header(CloudEventHeaders.ID);
            SpooledRecord before = arrived.putIfAbsent(id, got);
            if (before != null) {
                duplicates++;
                assertThat(got).as("a duplicate of %s is an exact copy", id).isEqualTo(before);
            }
        }
        System.out.printf("spool outage: produced %d, arrived %d distinct ce_ids, %d duplicate(s)%n", produced.size(),
                arrived.size(), duplicates);
        assertThat(arrived).hasSize(produced.size());
        for (SpooledRecord record : produced) {
            assertThat(arrived.get(record.header(CloudEventHeaders.ID))).as("arrived as produced: %s", record)
                    .isEqualTo(record);
        }
    }

    private static Map<String, byte[]> headers(ConsumerRecord<String, byte[]> record) {
        Map<String, byte[]> headers = new java.util.LinkedHashMap<>();
        record.headers().forEach(h -> headers.put(h.key(), Arrays.copyOf(h.value(), h.value().length)));
        return headers;
    }

    private static List<ConsumerRecord<String, byte[]>> readAll(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + port);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p)) && System.nanoTime() < until) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
