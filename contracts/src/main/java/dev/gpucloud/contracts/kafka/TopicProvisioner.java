package dev.gpucloud.contracts.kafka;

import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Creates every gpucloud topic and its dead-letter topic on a broker, and corrects one that exists with fewer
 * partitions or another cleanup policy than declared (a topic a consumer's request auto-created with the broker's
 * defaults before it was provisioned): partitions are added, never removed, and the policy is set; nothing else of an
 * existing topic is touched.
 * Run as {@code java ... TopicProvisioner localhost:9092 [CLIENT_CONFIG] [--replication-factor N]}, the file giving
 * the admin's login where the broker asks for one; new topics are replicated N times (1 unless given), and with
 * more than one copy a write waits for all but one of them ({@code min.insync.replicas} N-1, as Strimzi's
 * KafkaTopics of deploy/k8s have it for 3). An existing topic's replication is not changed.
 */
public final class TopicProvisioner {

    private TopicProvisioner() {
    }

    /** The topics as Kafka's admin API wants them, with the given replication factor. */
    public static List<NewTopic> newTopics(short replicationFactor) {
        List<NewTopic> topics = new ArrayList<>();
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("a replication factor is at least 1, not " + replicationFactor);
        }
        Map<String, String> durability = replicationFactor > 1
                ? Map.of("min.insync.replicas", String.valueOf(replicationFactor - 1)) : Map.of();
        for (Topic<?> topic : Topics.all()) {
            Map<String, String> configs = new LinkedHashMap<>(durability);
            configs.put("cleanup.policy", topic.cleanup().policy);
            if (topic.retention() != null) {
                configs.put("retention.ms", String.valueOf(topic.retention().toMillis()));
            }
            topics.add(new NewTopic(topic.name(), topic.partitions(), replicationFactor).configs(configs));
            Map<String, String> dead = new LinkedHashMap<>(durability);
            dead.put("cleanup.policy", "delete");
            dead.put("retention.ms", String.valueOf(30L * 24 * 3600 * 1000));
            topics.add(new NewTopic(topic.deadLetterTopic(), Topics.DEAD_LETTER_PARTITIONS, replicationFactor)
                    .configs(dead));
        }
        return topics;
    }

    /** What {@link #provision} did: the topics it created, and what it corrected of existing ones. */
    public record Provisioned(List<String> created, List<String> corrected) {
    }

    /** Creates what is missing and corrects what was created otherwise; returns the names it created. */
    public static List<String> ensureTopics(String bootstrapServers) throws InterruptedException, ExecutionException {
        return ensureTopics(bootstrapServers, new Properties());
    }

    /** As {@link #ensureTopics(String)}, logging in with the given client settings (the broker's admin's). */
    public static List<String> ensureTopics(String bootstrapServers, Properties login)
            throws InterruptedException, ExecutionException {
        return provision(bootstrapServers, login).created();
    }

    /** Creates what is missing and corrects what exists with too few partitions or another cleanup policy. */
    public static Provisioned provision(String bootstrapServers, Properties login)
            throws InterruptedException, ExecutionException {
        return provision(bootstrapServers, login, (short) 1);
    }

    /** As {@link #provision(String, Properties)}, a topic it creates replicated {@code replicationFactor} times. */
    public static Provisioned provision(String bootstrapServers, Properties login, short replicationFactor)
            throws InterruptedException, ExecutionException {
        List<NewTopic> wanted = newTopics(replicationFactor);
        Properties props = new Properties();
        props.putAll(login);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin admin = Admin.create(props)) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> missing = wanted.stream()
                    .filter(t -> !existing.contains(t.name()))
                    .toList();
            List<String> corrected = correct(admin, wanted.stream().filter(t -> existing.contains(t.name())).toList());
            if (!missing.isEmpty()) {
                try {
                    admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                        throw e;
                    }
                }
            }
            return new Provisioned(missing.stream().map(NewTopic::name).toList(), corrected);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new ExecutionException("broker at " + bootstrapServers + " did not answer in 30 s", e);
        }
    }

    /** Adds the partitions and sets the cleanup policy that existing topics lack; says what it changed. */
    public static List<String> correct(Admin admin, List<NewTopic> existing)
            throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
        if (existing.isEmpty()) {
            return List.of();
        }
        List<String> names = existing.stream().map(NewTopic::name).toList();
        Map<String, TopicDescription> described = admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
        List<ConfigResource> resources = names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n))
                .toList();
        Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get(30, TimeUnit.SECONDS);
        Map<String, NewPartitions> grow = new LinkedHashMap<>();
        Map<ConfigResource, java.util.Collection<AlterConfigOp>> policies = new LinkedHashMap<>();
        List<String> corrected = new ArrayList<>();
        for (NewTopic topic : existing) {
            int has = described.get(topic.name()).partitions().size();
            if (has < topic.numPartitions()) {
                grow.put(topic.name(), NewPartitions.increaseTo(topic.numPartitions()));
                corrected.add(topic.name() + ": " + has + " -> " + topic.numPartitions() + " partitions");
            }
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic.name());
            String wantedPolicy = topic.configs().get("cleanup.policy");
            ConfigEntry policy = configs.get(resource).get("cleanup.policy");
            if (wantedPolicy != null && (policy == null || !wantedPolicy.equals(policy.value()))) {
                policies.put(resource, List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", wantedPolicy),
                        AlterConfigOp.OpType.SET)));
                corrected.add(topic.name() + ": cleanup.policy " + (policy == null ? "unset" : policy.value()) + " -> "
                        + wantedPolicy);
            }
        }
        if (!grow.isEmpty()) {
            admin.createPartitions(grow).all().get(30, TimeUnit.SECONDS);
        }
        if (!policies.isEmpty()) {
            admin.incrementalAlterConfigs(policies).all().get(30, TimeUnit.SECONDS);
        }
        return corrected;
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        short replication = replicationOption(rest);
        String bootstrap = rest.size() > 0 ? rest.get(0) : "localhost:9092";
        Properties login = rest.size() > 1 ? KafkaAccess.clientConfig(java.nio.file.Path.of(rest.get(1))) : new Properties();
        Provisioned done = provision(bootstrap, login, replication);
        List<String> created = done.created();
        System.out.println(created.isEmpty()
                ? "all " + Topics.all().size() * 2 + " topics already exist on " + bootstrap
                : "created " + created.size() + " topics on " + bootstrap + ": " + String.join(", ", created));
        if (!done.corrected().isEmpty()) {
            System.out.println("corrected topics made with the broker's defaults: " + String.join("; ", done.corrected()));
        }
    }

    /** Takes {@code --replication-factor N} out of {@code args} (1 where it is not there). */
    static short replicationOption(List<String> args) {
        int at = args.indexOf("--replication-factor");
        if (at < 0) {
            return 1;
        }
        if (at + 1 >= args.size()) {
            throw new IllegalArgumentException("--replication-factor needs a number");
        }
        String value = args.remove(at + 1);
        args.remove(at);
        try {
            short n = Short.parseShort(value);
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--replication-factor must be a whole number from 1, not '"
                    + (value.length() > 20 ? value.substring(0, 20) + "..." : value) + "'");
        }
    }
}
