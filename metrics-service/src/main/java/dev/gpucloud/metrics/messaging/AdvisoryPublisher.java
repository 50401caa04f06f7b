package dev.gpucloud.metrics.messaging;

import dev.gpucloud.contracts.events.AdvisoryKind;
import dev.gpucloud.contracts.events.GpuAdvisory;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.exporter.PlatformMeters;
import dev.gpucloud.metrics.platform.Advisory;
import io.quarkus.runtime.Startup;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.jboss.logging.Logger;

/**
 * Publishes every advisory the platform fold raises to {@code gpu.advisories}, keyed by allocationId,
 * through the service's one outgoing channel. Sending never blocks the consumer that raised it; a
 * send that fails is logged (the advisory is still counted and shown as a series).
 */
@Startup
@ApplicationScoped
public class AdvisoryPublisher {

    static final String SOURCE = "metrics-service";
    private static final Logger LOG = Logger.getLogger(AdvisoryPublisher.class);

    private final MutinyEmitter<ProducerRecord<String, byte[]>> events;
    private final MetricsConfig config;

    public AdvisoryPublisher(@Channel("events-out") MutinyEmitter<ProducerRecord<String, byte[]>> events,
            MetricsConfig config, PlatformMeters meters) {
        this.events = events;
        this.config = config;
        meters.onAdvisory(this::publish);
    }

    void publish(Advisory advisory) {
        GpuAdvisory payload = toEvent(advisory, Instant.now());
        events.send(EventRecords.record(Topics.GPU_ADVISORIES, payload.allocationId(), payload, SOURCE))
                .subscribe().with(ok -> { }, failure -> LOG.warnf("could not publish %s advisory for %s: %s",
                        advisory.kind().label(), advisory.allocationId(), failure.toString()));
    }

    GpuAdvisory toEvent(Advisory advisory, Instant now) {
        boolean idle = advisory.kind() == Advisory.Kind.IDLE;
        return new GpuAdvisory(idle ? AdvisoryKind.IDLE : AdvisoryKind.MEMORY_PRESSURE, advisory.allocationId(),
                advisory.jobId(), advisory.tenant(), advisory.nodeId(), advisory.since(), now,
                Math.max(0, Math.min(100, advisory.value())),
                idle ? config.idleUtilizationPercent() : config.memoryPressurePercent());
    }
}
