package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;
import org.jboss.logging.Logger;

/**
 * Sends everything the agent publishes through one Kafka channel: each record is built with its
 * topic, key and CloudEvents headers, and SmallRye sends it as it is. Its ce_source names the host
 * the event is about ("/node-agent/sim-a100-0").
 */
@ApplicationScoped
public class EventPublisher {

    private static final Logger LOG = Logger.getLogger(EventPublisher.class);

    @Inject
    @Channel("events-out")
    @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 16_384)
    MutinyEmitter<ProducerRecord<String, byte[]>> emitter;

    /** The CloudEvents source of events about {@code nodeId}. */
    public static String source(String nodeId) {
        return "/node-agent/" + nodeId;
    }

    /** A record of {@code payload} on {@code topic}, keyed by {@code key}, about host {@code nodeId}. */
    public static <T> ProducerRecord<String, byte[]> record(Topic<T> topic, String key, T payload, String nodeId) {
        return EventRecords.record(topic, key, payload, source(nodeId));
    }

    /** Sends one record once subscribed; the item arrives when the broker has it. */
    public Uni<Void> send(ProducerRecord<String, byte[]> record) {
        return emitter.send(record);
    }

    /**
     * Logs and sends a runner's reports; completes when the broker has them all. A send that fails
     * (after the producer's own retries) is logged, not thrown: the run has happened either way.
     */
    public Uni<Void> publish(Reports reports) {
        if (reports.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        reports.notes().forEach(note -> LOG.info(note));
        List<Uni<Void>> sends = new ArrayList<>();
        for (AllocationEvent event : reports.allocationEvents()) {
            log(event);
            sends.add(send(record(Topics.ALLOCATION_EVENTS, event.jobId(), event, event.nodeId()))
                    .onFailure().invoke(e -> LOG.errorf(e, "lost %s of %s: %s", event.type(), event.allocationId(),
                            e.getMessage()))
                    .onFailure().recoverWithNull());
        }
        for (UsageEvent usage : reports.usage()) {
            LOG.debugf("usage of %s: [%s, %s) %d x %s", usage.allocationId(), usage.from(), usage.to(), usage.units(),
                    usage.sku().code());
            sends.add(send(record(Topics.USAGE_EVENTS, usage.allocationId(), usage, usage.nodeId()))
                    .onFailure().invoke(e -> LOG.errorf(e, "lost usage [%s, %s) of %s: %s", usage.from(), usage.to(),
                            usage.allocationId(), e.getMessage()))
                    .onFailure().recoverWithNull());
        }
        if (sends.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.join().all(sends).andCollectFailures().replaceWithVoid();
    }

    private static void log(AllocationEvent event) {
        switch (event.type()) {
            case STARTED -> LOG.infof("started %s of %s on %s: %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
            case EXITED -> LOG.infof("%s of %s on %s %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
            case CHECKPOINT_SAVED -> LOG.infof("%s of %s on %s saved checkpoint %s", event.allocationId(),
                    event.jobId(), event.nodeId(), event.checkpointPath());
            case LOST -> LOG.warnf("%s of %s on %s lost: %s", event.allocationId(), event.jobId(), event.nodeId(),
                    event.detail());
        }
    }
}
