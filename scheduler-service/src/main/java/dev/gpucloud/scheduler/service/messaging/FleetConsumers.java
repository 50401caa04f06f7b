package dev.gpucloud.scheduler.service.messaging;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobRequest;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * The scheduler's Kafka inputs. A record that cannot be decoded fails its Uni; SmallRye then writes
 * it to the topic's dead-letter topic with the reason in the dead-letter-reason header, and goes on.
 */
@ApplicationScoped
public class FleetConsumers {

    private static final Logger LOG = Logger.getLogger(FleetConsumers.class);

    private final SchedulerEngine engine;

    public FleetConsumers(SchedulerEngine engine) {
        this.engine = engine;
    }

    /** Hosts join, change and leave (tombstone) on the compacted inventory topic. */
    @Incoming("inventory-in")
    public Uni<Void> inventory(ConsumerRecord<String, byte[]> record) {
        return decode(() -> EventRecords.decode(Topics.GPU_INVENTORY, record)).flatMap(e -> {
            if (e.isTombstone()) {
                return engine.hostLeft(e.key());
            }
            requireKey(Topics.GPU_INVENTORY.name(), e, e.payload().nodeId());
            return engine.hostReported(e.payload());
        });
    }

    /**
     * Telemetry only tells the scheduler that a host is alive: it reads the key and the record's
     * time and never parses the sample, so the hot topic costs little here.
     */
    @Incoming("telemetry-in")
    public Uni<Void> telemetry(ConsumerRecord<String, byte[]> record) {
        if (record.key() == null || record.key().isBlank() || record.value() == null) {
            return Uni.createFrom().voidItem();
        }
        Instant at = Instant.ofEpochMilli(record.timestamp());
        Instant now = Instant.now();
        engine.heardFrom(record.key(), at.isAfter(now) ? now : at);
        return Uni.createFrom().voidItem();
    }

    @Incoming("allocations-in")
    public Uni<Void> allocations(ConsumerRecord<String, byte[]> record) {
        return decode(() -> EventRecords.decode(Topics.ALLOCATION_EVENTS, record)).flatMap(e -> {
            AllocationEvent event = e.payload();
            if (event == null) {
                throw new MalformedEventException(Topics.ALLOCATION_EVENTS.name() + ": record has no value");
            }
            requireKey(Topics.ALLOCATION_EVENTS.name(), e, event.jobId());
            return engine.allocationEvent(event);
        });
    }

    /** Job submissions from producers other than gRPC; deduplicated on (tenant, clientRequestId). */
    @Incoming("requests-in")
    public Uni<Void> requests(ConsumerRecord<String, byte[]> record) {
        return decode(() -> EventRecords.decode(Topics.JOB_REQUESTS, record)).flatMap(e -> {
            JobRequest request = e.payload();
            if (request == null) {
                throw new MalformedEventException(Topics.JOB_REQUESTS.name() + ": record has no value");
            }
            requireKey(Topics.JOB_REQUESTS.name(), e, request.tenant());
            return engine.submit(request.tenant(), request.clientRequestId(), request.spec())
                    .invoke(s -> LOG.infof("job.requests %s/%s -> %s%s", request.tenant(), request.clientRequestId(),
                            s.job().jobId(), s.duplicate() ? " (repeat)" : ""))
                    .replaceWithVoid();
        });
    }

    @Incoming("node-events-in")
    public Uni<Void> nodeEvents(ConsumerRecord<String, byte[]> record) {
        return decode(() -> EventRecords.decode(Topics.NODE_EVENTS, record)).flatMap(e -> {
            NodeEvent event = e.payload();
            if (event == null) {
                throw new MalformedEventException(Topics.NODE_EVENTS.name() + ": record has no value");
            }
            requireKey(Topics.NODE_EVENTS.name(), e, event.nodeId());
            return engine.nodeEvent(event);
        });
    }

    private static <T> Uni<Envelope<T>> decode(java.util.function.Supplier<Envelope<T>> decoder) {
        return Uni.createFrom().item(decoder);
    }

    private static void requireKey(String topic, Envelope<?> e, String expected) {
        if (!e.key().equals(expected)) {
            throw new MalformedEventException(topic + ": record key '" + e.key()
                    + "' does not match the payload's '" + expected + "'");
        }
    }
}
