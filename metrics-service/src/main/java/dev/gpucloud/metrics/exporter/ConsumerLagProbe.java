package dev.gpucloud.metrics.exporter;

import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.platform.ConsumerLag;
import dev.gpucloud.metrics.platform.ConsumerLag.Partition;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Reads every consumer group's committed offsets and the partitions' end offsets from the broker
 * (Kafka's AdminClient) every lag-interval, and exports the difference as
 * {@code gpucloud_kafka_consumer_lag{group, topic}}: the records a group still has to read. A growing
 * lag on usage.events for billing-service is the billing fold falling behind. The broker's offsets belong to
 * no host, so where several shards split the fleet only shard 0 reads and exports them.
 */
@ApplicationScoped
public class ConsumerLagProbe {

    private static final Logger LOG = Logger.getLogger(ConsumerLagProbe.class);
    private static final long TIMEOUT_SECONDS = 10;

    private final MetricsConfig config;
    private final String bootstrapServers;
    private final MultiGauge lag;
    private final MultiGauge deadLetters;
    private final AtomicLong lastSuccessEpochSeconds = new AtomicLong();
    private final Pattern groups;
    private Admin admin;

    public ConsumerLagProbe(MetricsConfig config, MeterRegistry registry, FleetShard shard,
            @ConfigProperty(name = "kafka.bootstrap.servers") String bootstrapServers) {
        this.config = config;
        this.bootstrapServers = bootstrapServers;
        this.groups = Pattern.compile(config.lagGroups());
        if (!shard.exportsFleetWideSeries()) {
            // another shard's series: nothing registered here, so no lag.updated of 0 looks like a stuck probe
            this.lag = null;
            this.deadLetters = null;
            return;
        }
        this.lag = MultiGauge.builder("gpucloud.kafka.consumer.lag")
                .description("Records each consumer group has still to read, per topic (summed over partitions).")
                .register(registry);
        this.deadLetters = MultiGauge.builder("gpucloud.kafka.dlq.records")
                .description("Records in each dead-letter topic (<topic>.dlq): the sum of its partitions' end offsets.")
                .register(registry);
        Gauge.builder("gpucloud.kafka.consumer.lag.updated", lastSuccessEpochSeconds, AtomicLong::get)
                .description("When consumer lag was last read from the broker (Unix time, seconds).")
                .register(registry);
    }

    @Scheduled(every = "${gpucloud.metrics.lag-interval}", delayed = "5s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = LagDisabled.class)
    void probe() {
        try {
            List<ConsumerLag.Lag> lags = read();
            lag.register(lags.stream().map(l -> MultiGauge.Row.of(
                    Tags.of("group", l.group(), "topic", l.topic()), l.records())).toList(), true);
            deadLetters.register(readDeadLetters().entrySet().stream().map(e -> MultiGauge.Row.of(
                    Tags.of("topic", e.getKey()), e.getValue())).toList(), true);
            lastSuccessEpochSeconds.set(System.currentTimeMillis() / 1000);
        } catch (Exception e) {
            // The old values stay; lag.updated stops moving, which an alert can see.
            LOG.warnf("could not read consumer lag from %s: %s", bootstrapServers, e.toString());
        }
    }

    private List<ConsumerLag.Lag> read() throws Exception {
        Admin client = admin();
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        for (ConsumerGroupListing group : client.listConsumerGroups().all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            if (groups.matcher(group.groupId()).matches()) {
                specs.put(group.groupId(), new ListConsumerGroupOffsetsSpec());
            }
        }
        if (specs.isEmpty()) {
            return List.of();
        }
        Map<String, Map<TopicPartition, OffsetAndMetadata>> offsets = client.listConsumerGroupOffsets(specs)
                .all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        Map<String, Map<Partition, Long>> committed = new HashMap<>();
        Set<TopicPartition> partitions = new HashSet<>();
        offsets.forEach((group, byPartition) -> byPartition.forEach((tp, offset) -> {
            if (offset != null) {
                committed.computeIfAbsent(group, g -> new HashMap<>())
                        .put(new Partition(tp.topic(), tp.partition()), offset.offset());
                partitions.add(tp);
            }
        }));
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        Map<Partition, Long> ends = new HashMap<>();
        if (!latest.isEmpty()) {
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> info = client.listOffsets(latest)
                    .all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            info.forEach((tp, i) -> ends.put(new Partition(tp.topic(), tp.partition()), i.offset()));
        }
        return ConsumerLag.of(committed, ends, groups, config.maxLagSeries());
    }

    /** Each dead-letter topic's record count (end offsets; nothing deletes from them before retention). */
    private Map<String, Long> readDeadLetters() throws Exception {
        Admin client = admin();
        Set<String> topics = new HashSet<>();
        for (String name : client.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            if (name.endsWith(".dlq")) {
                topics.add(name);
            }
        }
        Map<String, Long> counts = new java.util.TreeMap<>();
        if (topics.isEmpty()) {
            return counts;
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        client.describeTopics(topics).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).forEach((name, d) ->
                d.partitions().forEach(p -> latest.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
        client.listOffsets(latest).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .forEach((tp, info) -> counts.merge(tp.topic(), info.offset(), Long::sum));
        return counts;
    }

    private synchronized Admin admin() {
        if (admin == null) {
            Map<String, Object> settings = new java.util.HashMap<>(KafkaAccess.loginSettings(
                    key -> ConfigProvider.getConfig().getOptionalValue(key, String.class)));
            settings.putAll(Map.of(
                    AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                    AdminClientConfig.CLIENT_ID_CONFIG, "metrics-service-lag",
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000));
            admin = Admin.create(settings);
        }
        return admin;
    }

    @PreDestroy
    synchronized void close() {
        if (admin != null) {
            admin.close(java.time.Duration.ofSeconds(2));
        }
    }

    /** Skips the probe when gpucloud.metrics.lag-enabled is false, and on every shard but shard 0. */
    @jakarta.inject.Singleton
    public static class LagDisabled implements Scheduled.SkipPredicate {
        private final MetricsConfig config;
        private final FleetShard shard;

        public LagDisabled(MetricsConfig config, FleetShard shard) {
            this.config = config;
            this.shard = shard;
        }

        @Override
        public boolean test(io.quarkus.scheduler.ScheduledExecution execution) {
            return !config.lagEnabled() || !shard.exportsFleetWideSeries();
        }
    }
}
