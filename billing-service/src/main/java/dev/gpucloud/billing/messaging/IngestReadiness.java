package dev.gpucloud.billing.messaging;

import dev.gpucloud.billing.config.BillingConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;

/**
 * Readiness that tells whether billing ingests: DOWN, saying why, once the lag of usage.events (the log's
 * end minus the offsets billing has stored, which the group's committed offsets follow) has stayed above
 * zero without shrinking for {@code gpucloud.billing.ingest.stall-after}. Exported as
 * {@code gpucloud_billing_usage_lag_records} and {@code gpucloud_billing_ingest_stalled} for the alert.
 */
@Readiness
@ApplicationScoped
public class IngestReadiness implements HealthCheck {

    private static final Logger LOG = Logger.getLogger(IngestReadiness.class);

    private final KafkaClientService kafka;
    private final BillingConfig config;
    private final Vertx vertx;
    private final LagTrend trend = new LagTrend();
    private volatile Optional<Duration> stalledFor = Optional.empty();
    private volatile long lag = -1;

    public IngestReadiness(KafkaClientService kafka, BillingConfig config, Vertx vertx, MeterRegistry registry) {
        this.kafka = kafka;
        this.config = config;
        this.vertx = vertx;
        Gauge.builder("gpucloud.billing.usage.lag", this, r -> r.lag).baseUnit("records")
                .description("Records of usage.events not yet stored by billing (end offsets minus stored offsets)")
                .register(registry);
        Gauge.builder("gpucloud.billing.ingest.stalled", this, r -> r.stalled() ? 1 : 0)
                .description("1 while the usage.events lag has stayed above zero without shrinking for stall-after")
                .register(registry);
    }

    void start(@Observes StartupEvent startup) {
        vertx.setPeriodic(config.ingest().lagSampleInterval().toMillis(), id -> sample());
    }

    private boolean stalled() {
        return stalledFor.filter(d -> d.compareTo(config.ingest().stallAfter()) >= 0).isPresent();
    }

    private void sample() {
        List<KafkaConsumer<Object, Object>> consumers;
        try {
            consumers = kafka.getConsumers(UsageConsumer.CHANNEL);
        } catch (RuntimeException e) {
            return; // not started yet
        }
        List<Uni<Long>> lags = new ArrayList<>();
        for (KafkaConsumer<Object, Object> consumer : consumers) {
            lags.add(consumer.runOnPollingThread(c -> {
                Set<TopicPartition> assigned = c.assignment();
                if (assigned.isEmpty()) {
                    return 0L;
                }
                Map<TopicPartition, Long> ends = c.endOffsets(assigned, Duration.ofSeconds(5));
                Map<TopicPartition, OffsetAndMetadata> committed = c.committed(assigned, Duration.ofSeconds(5));
                long sum = 0;
                for (TopicPartition p : assigned) {
                    OffsetAndMetadata done = committed.get(p);
                    sum += Math.max(0, ends.getOrDefault(p, 0L) - (done == null ? 0 : done.offset()));
                }
                return sum;
            }));
        }
        if (lags.isEmpty()) {
            return;
        }
        Uni.join().all(lags).andFailFast().subscribe().with(values -> {
            long total = values.stream().mapToLong(Long::longValue).sum();
            Instant now = Instant.now();
            synchronized (trend) {
                trend.sample(now, total);
                lag = total;
                stalledFor = trend.notShrinkingFor(now);
            }
        }, e -> LOG.debugf("could not measure the usage.events lag: %s", e.toString()));
    }

    @Override
    public HealthCheckResponse call() {
        var response = HealthCheckResponse.named("billing usage ingestion").withData("lagRecords", lag)
                .withData("stallAfter", config.ingest().stallAfter().toString());
        if (stalled()) {
            return response.down().withData("reason", "usage.events lag of " + lag
                    + " records has not shrunk for " + stalledFor.get().toSeconds()
                    + " s: billing is not ingesting (docs/runbooks/billing-ingest-stalled.md)").build();
        }
        return response.up().build();
    }
}
