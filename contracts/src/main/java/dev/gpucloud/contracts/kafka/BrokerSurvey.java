package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.Topics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Says what a broker that is already running holds before a stack adopts it: its cluster id and
 * the hosts that {@code gpu.inventory} still describes (the latest record of each key that is not a
 * tombstone), because a scheduler started on it will place jobs on every one of them. Run as
 * {@code java ... BrokerSurvey localhost:9092}; prints one line.
 */
public final class BrokerSurvey {

    /** How many host ids the one-line summary names before it says "...". */
    static final int NAMED_HOSTS = 4;

    private BrokerSurvey() {
    }

    /** What a broker holds: its cluster id and the live host ids in gpu.inventory, sorted. */
    public record Survey(String clusterId, boolean inventoryTopicExists, List<String> hosts) {
        public Survey {
            hosts = List.copyOf(hosts);
        }

        /** One line for a person deciding whether to adopt the broker. */
        public String summary() {
            String inventory;
            if (!inventoryTopicExists) {
                inventory = "no " + Topics.GPU_INVENTORY.name() + " topic yet";
            } else if (hosts.isEmpty()) {
                inventory = "no hosts in " + Topics.GPU_INVENTORY.name();
            } else {
                List<String> named = hosts.subList(0, Math.min(NAMED_HOSTS, hosts.size()));
                inventory = hosts.size() + (hosts.size() == 1 ? " host" : " hosts") + " in "
                        + Topics.GPU_INVENTORY.name() + " (" + String.join(", ", named)
                        + (hosts.size() > named.size() ? ", ..." : "") + ")";
            }
            return "cluster id " + clusterId + ", " + inventory;
        }
    }

    /** Reads the cluster id and gpu.inventory from its beginning to its current end. */
    public static Survey survey(String bootstrapServers, Duration timeout) throws Exception {
        Properties admin = new Properties();
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        String clusterId;
        try (Admin client = Admin.create(admin)) {
            clusterId = client.describeCluster().clusterId().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props)) {
            List<PartitionInfo> partitions = consumer.listTopics(timeout).get(Topics.GPU_INVENTORY.name());
            if (partitions == null || partitions.isEmpty()) {
                return new Survey(clusterId, false, List.of());
            }
            List<TopicPartition> assigned = new ArrayList<>();
            partitions.forEach(p -> assigned.add(new TopicPartition(p.topic(), p.partition())));
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            Map<TopicPartition, Long> end = consumer.endOffsets(assigned, timeout);
            Map<String, Boolean> live = new TreeMap<>();
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!caughtUp(consumer, end) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.key() != null) {
                        live.put(r.key(), r.value() != null);
                    }
                }
            }
            return new Survey(clusterId, true, live.entrySet().stream().filter(Map.Entry::getValue)
                    .map(Map.Entry::getKey).toList());
        }
    }

    private static boolean caughtUp(KafkaConsumer<String, byte[]> consumer, Map<TopicPartition, Long> end) {
        return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args.length > 0 ? args[0] : "localhost:9092";
        System.out.println(survey(bootstrap, Duration.ofSeconds(15)).summary());
    }
}
