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
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.config.ConfigProvider;

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

    /**
     * Waits until everything on usage.events up to now is folded and written: the stored next offset of every
     * partition (table fold_offset, written with the usage) has reached the partition's end as of this call.
     */
    static void awaitFolded(Pool pool, Duration patience) {
        Map<Integer, Long> ends = ends(Topics.USAGE_EVENTS.name());
        long deadline = System.nanoTime() + patience.toNanos();
        Map<Integer, Long> stored = Map.of();
        while (System.nanoTime() < deadline) {
            stored = new HashMap<>();
            for (Row row : pool.preparedQuery("SELECT kafka_partition, next_offset FROM fold_offset WHERE topic = $1")
                    .execute(Tuple.of(Topics.USAGE_EVENTS.name())).await().atMost(Duration.ofSeconds(10))) {
                stored.put(row.getInteger("kafka_partition"), row.getLong("next_offset"));
            }
            Map<Integer, Long> now = stored;
            if (ends.entrySet().stream().allMatch(e -> e.getValue() == 0 || now.getOrDefault(e.getKey(), -1L) >= e.getValue())) {
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("usage.events not folded within " + patience + ": ends " + ends + ", stored " + stored);
    }

    /** Partition to end offset (the next offset to be written) of a topic, now. */
    static Map<Integer, Long> ends(String topic) {
        String bootstrap = ConfigProvider.getConfig().getValue("kafka.bootstrap.servers", String.class);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            var partitions = admin.describeTopics(java.util.List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get(topic).partitions();
            Map<TopicPartition, OffsetSpec> latest = partitions.stream().collect(Collectors.toMap(
                    p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
            Map<Integer, Long> ends = new HashMap<>();
            admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS)
                    .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
            return ends;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the end offsets of " + topic, e);
        }
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
