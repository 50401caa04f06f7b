package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Creates every gpucloud topic and its dead-letter topic on a broker, leaving existing ones alone.
 * Run as {@code java ... TopicProvisioner localhost:9092 [CLIENT_CONFIG]}, the file giving the admin's login
 * where the broker asks for one.
 */
public final class TopicProvisioner {

    private TopicProvisioner() {
    }

    /** The topics as Kafka's admin API wants them, with the given replication factor. */
    public static List<NewTopic> newTopics(short replicationFactor) {
        List<NewTopic> topics = new ArrayList<>();
        for (Topic<?> topic : Topics.all()) {
            topics.add(new NewTopic(topic.name(), topic.partitions(), replicationFactor)
                    .configs(Map.of("cleanup.policy", topic.cleanup().policy)));
            topics.add(new NewTopic(topic.deadLetterTopic(), Topics.DEAD_LETTER_PARTITIONS, replicationFactor)
                    .configs(Map.of("cleanup.policy", "delete", "retention.ms", String.valueOf(30L * 24 * 3600 * 1000))));
        }
        return topics;
    }

    /** Creates what is missing; returns the names it created. */
    public static List<String> ensureTopics(String bootstrapServers) throws InterruptedException, ExecutionException {
        return ensureTopics(bootstrapServers, new Properties());
    }

    /** As {@link #ensureTopics(String)}, logging in with the given client settings (the broker's admin's). */
    public static List<String> ensureTopics(String bootstrapServers, Properties login)
            throws InterruptedException, ExecutionException {
        Properties props = new Properties();
        props.putAll(login);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin admin = Admin.create(props)) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> missing = newTopics((short) 1).stream()
                    .filter(t -> !existing.contains(t.name()))
                    .toList();
            if (!missing.isEmpty()) {
                try {
                    admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                        throw e;
                    }
                }
            }
            return missing.stream().map(NewTopic::name).toList();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new ExecutionException("broker at " + bootstrapServers + " did not answer in 30 s", e);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args.length > 0 ? args[0] : "localhost:9092";
        Properties login = args.length > 1 ? KafkaAccess.clientConfig(java.nio.file.Path.of(args[1])) : new Properties();
        List<String> created = ensureTopics(bootstrap, login);
        System.out.println(created.isEmpty()
                ? "all " + Topics.all().size() * 2 + " topics already exist on " + bootstrap
                : "created " + created.size() + " topics on " + bootstrap + ": " + String.join(", ", created));
    }
}
