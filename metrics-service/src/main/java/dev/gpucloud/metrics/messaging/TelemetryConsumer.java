package dev.gpucloud.metrics.messaging;

import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.metrics.gpu.GpuFleet;
import dev.gpucloud.metrics.platform.PlatformState;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Folds {@code gpu.telemetry} into the fleet's series. A record that cannot be applied (malformed,
 * no CloudEvents headers, key not its nodeId, over a limit) throws: SmallRye nacks it, writes it to
 * {@code gpu.telemetry.dlq} with the message as {@code dead-letter-reason}, and goes on.
 */
@ApplicationScoped
public class TelemetryConsumer {

    private static final Logger LOG = Logger.getLogger(TelemetryConsumer.class);

    private final GpuFleet fleet;
    private final PlatformState platform;

    public TelemetryConsumer(GpuFleet fleet, PlatformState platform) {
        this.fleet = fleet;
        this.platform = platform;
    }

    /** Says at start whether agents' records are checked; a service with an enrolment key it cannot read stops. */
    void onStart(@jakarta.enterprise.event.Observes io.quarkus.runtime.StartupEvent start) {
        LOG.info(dev.gpucloud.contracts.kafka.Enrolment.startupNote());
    }

    /** Runs on the consumer's event loop: a sample takes microseconds, so a worker-thread hop would cost more. */
    @Incoming("telemetry-in")
    @NonBlocking
    public void consume(ConsumerRecord<String, byte[]> record) {
        Envelope<TelemetrySample> envelope = EventRecords.decode(Topics.GPU_TELEMETRY, record);
        if (envelope.isTombstone()) {
            throw new MalformedEventException(Topics.GPU_TELEMETRY.name() + ": record has no value (a sample is required)");
        }
        TelemetrySample sample = envelope.payload();
        if (!envelope.key().equals(sample.nodeId())) {
            throw new MalformedEventException(Topics.GPU_TELEMETRY.name() + ": key '" + envelope.key()
                    + "' differs from field 'nodeId' '" + sample.nodeId() + "'");
        }
        GpuFleet.SampleOutcome outcome;
        try {
            outcome = fleet.apply(sample, Instant.now());
        } catch (IllegalArgumentException e) {
            throw new MalformedEventException(Topics.GPU_TELEMETRY.name() + ": " + e.getMessage(), e);
        }
        if (outcome == GpuFleet.SampleOutcome.APPLIED || outcome == GpuFleet.SampleOutcome.HOST_STARTED_REPORTING) {
            // Idle and memory-pressure advice for the allocations on this host.
            platform.observe(sample);
        }
        switch (outcome) {
            case HOST_STARTED_REPORTING -> LOG.infof("host %s (%s) reports telemetry for %d GPUs",
                    sample.nodeId(), sample.hostname(), sample.gpus().size());
            case NOT_NEWER -> LOG.debugf("host %s: sample of %s is not newer than the latest applied, ignored",
                    sample.nodeId(), sample.sampledAt());
            case BEFORE_DEPARTURE -> LOG.debugf("host %s: sample of %s predates its departure, ignored",
                    sample.nodeId(), sample.sampledAt());
            case NOT_BELIEVED -> LOG.debugf("host %s: sample of %s dropped (clock or not in the inventory), counted",
                    sample.nodeId(), sample.sampledAt());
            case APPLIED -> {
            }
        }
    }
}
