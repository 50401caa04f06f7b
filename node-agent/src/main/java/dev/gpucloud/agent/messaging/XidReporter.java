package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.inventory.EnrichedBackend;
import dev.gpucloud.agent.nvml.NvmlBackend;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Publishes each XID critical error NVML reports on node.events (through the spool) within a
 * second: XID 79 (fallen off the bus), 48 (double-bit ECC), 31 and 43 and the rest. Only the NVML
 * backend has an event set; with the others this does nothing.
 */
@ApplicationScoped
public class XidReporter {

    private static final Logger LOG = Logger.getLogger(XidReporter.class);

    private final GpuBackend backend;
    private final EventPublisher publisher;

    public XidReporter(GpuBackend backend, EventPublisher publisher) {
        this.backend = backend;
        this.publisher = publisher;
    }

    @Scheduled(identity = "xid-events", every = "1s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void poll() {
        if (!(EnrichedBackend.unwrap(backend) instanceof NvmlBackend nvml)) {
            return;
        }
        List<NvmlBackend.XidEvent> xids = nvml.pollXids();
        if (xids.isEmpty()) {
            return;
        }
        String nodeId = backend.inventory().stream().map(HostInventory::nodeId).findFirst().orElse("unknown");
        List<NodeEvent> events = xids.stream().map(x -> new NodeEvent(nodeId, NodeEventType.XID_ERROR,
                x.seenAt().truncatedTo(ChronoUnit.MILLIS), null, x.gpuIndex() < 0 ? null : x.gpuIndex(), (int) x.xid(),
                "NVML XID critical error " + x.xid() + (x.gpuIndex() < 0 ? " on an unknown device" : " on GPU " + x.gpuIndex())))
                .toList();
        events.forEach(e -> LOG.warnf("%s on %s: %s", e.type(), e.nodeId(), e.detail()));
        publisher.spool(events.stream().map(e -> EventPublisher.record(Topics.NODE_EVENTS, nodeId, e, nodeId)).toList());
    }
}
