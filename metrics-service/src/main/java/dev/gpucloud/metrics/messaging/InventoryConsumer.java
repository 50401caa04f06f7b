package dev.gpucloud.metrics.messaging;

import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MalformedEventException;
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
 * Follows {@code gpu.inventory} (compacted, read from the start): a description says a host is
 * there, a tombstone (null value) says it left, and every one of its series goes. A record that
 * cannot be applied goes to {@code gpu.inventory.dlq} with the reason.
 */
@ApplicationScoped
public class InventoryConsumer {

    private static final Logger LOG = Logger.getLogger(InventoryConsumer.class);

    private final GpuFleet fleet;
    private final PlatformState platform;

    public InventoryConsumer(GpuFleet fleet, PlatformState platform) {
        this.fleet = fleet;
        this.platform = platform;
    }

    @Incoming("inventory-in")
    @NonBlocking
    public void consume(ConsumerRecord<String, byte[]> record) {
        Envelope<HostInventory> envelope = EventRecords.decode(Topics.GPU_INVENTORY, record);
        if (envelope.isTombstone()) {
            GpuFleet.Departure departure = fleet.leave(envelope.key(), envelope.event().time(), Instant.now());
            platform.leave(envelope.key());
            if (departure.wasKnown()) {
                LOG.infof("host %s left: removed the series of its %d GPUs", envelope.key(), departure.gpusRemoved());
            } else {
                LOG.debugf("host %s left before it was seen", envelope.key());
            }
            return;
        }
        HostInventory inventory = envelope.payload();
        if (!envelope.key().equals(inventory.nodeId())) {
            throw new MalformedEventException(Topics.GPU_INVENTORY.name() + ": key '" + envelope.key()
                    + "' differs from field 'nodeId' '" + inventory.nodeId() + "'");
        }
        platform.describe(inventory);
        if (fleet.describe(inventory, Instant.now()) == GpuFleet.HostChange.APPEARED) {
            LOG.infof("host %s appeared: %s, %s in %s, %d GPUs", inventory.nodeId(), inventory.hostname(),
                    inventory.instanceType(), inventory.zone(), inventory.gpus().size());
        }
    }
}
