package dev.gpucloud.metrics.messaging;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.metrics.platform.PlatformState;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * Folds the platform's streams into {@link PlatformState}: job.events and allocation.events (read
 * whole at every start, to rebuild which jobs hold which GPUs), node.events and usage.events (read
 * from the end: they only count). A record that cannot be applied (malformed, no CloudEvents headers,
 * a key that is not the payload's id) throws, and SmallRye writes it to {@code <topic>.dlq} with the
 * reason in {@code dead-letter-reason}.
 */
@ApplicationScoped
public class PlatformConsumers {

    private final PlatformState platform;

    public PlatformConsumers(PlatformState platform) {
        this.platform = platform;
    }

    @Incoming("job-events-in")
    @NonBlocking
    public void jobEvent(ConsumerRecord<String, byte[]> record) {
        JobEvent event = decode(Topics.JOB_EVENTS, record);
        requireKey(Topics.JOB_EVENTS, record, "jobId", event.jobId());
        platform.job(event);
    }

    @Incoming("allocation-events-in")
    @NonBlocking
    public void allocationEvent(ConsumerRecord<String, byte[]> record) {
        AllocationEvent event = decode(Topics.ALLOCATION_EVENTS, record);
        requireKey(Topics.ALLOCATION_EVENTS, record, "jobId", event.jobId());
        platform.allocation(event);
    }

    @Incoming("node-events-in")
    @NonBlocking
    public void nodeEvent(ConsumerRecord<String, byte[]> record) {
        NodeEvent event = decode(Topics.NODE_EVENTS, record);
        requireKey(Topics.NODE_EVENTS, record, "nodeId", event.nodeId());
        platform.node(event);
    }

    @Incoming("usage-events-in")
    @NonBlocking
    public void usageEvent(ConsumerRecord<String, byte[]> record) {
        UsageEvent event = decode(Topics.USAGE_EVENTS, record);
        requireKey(Topics.USAGE_EVENTS, record, "allocationId", event.allocationId());
        platform.usage(event);
    }

    private static <T> T decode(Topic<T> topic, ConsumerRecord<String, byte[]> record) {
        Envelope<T> envelope = EventRecords.decode(topic, record);
        if (envelope.isTombstone()) {
            throw new MalformedEventException(topic.name() + ": record has no value (an event is required)");
        }
        return envelope.payload();
    }

    private static void requireKey(Topic<?> topic, ConsumerRecord<String, byte[]> record, String field, String value) {
        if (!value.equals(record.key())) {
            throw new MalformedEventException(topic.name() + ": key '" + record.key() + "' differs from field '"
                    + field + "' '" + value + "'");
        }
    }
}
