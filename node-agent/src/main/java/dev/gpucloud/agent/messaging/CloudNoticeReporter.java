package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.cloud.MetadataProvider;
import dev.gpucloud.agent.cloud.NoticeWatcher;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Topics;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Polls the cloud's metadata service for spot interruption and rebalance notices and publishes each
 * new one on node.events at once (through the spool), with its deadline, for every host of this
 * agent. Nothing happens when no cloud is configured.
 */
@ApplicationScoped
public class CloudNoticeReporter {

    private static final Logger LOG = Logger.getLogger(CloudNoticeReporter.class);

    private final EventPublisher publisher;
    private final NoticeWatcher watcher;

    public CloudNoticeReporter(Optional<MetadataProvider> provider, GpuBackend backend, EventPublisher publisher,
            Clock clock) {
        this.publisher = publisher;
        this.watcher = provider.map(p -> new NoticeWatcher(p, backend.inventory().stream().map(HostInventory::nodeId)
                .toList(), clock, LOG::warn)).orElse(null);
        provider.ifPresent(p -> LOG.infof("watching %s metadata for spot and rebalance notices", p.cloud()));
    }

    @Scheduled(identity = "cloud-notices", every = "${gpucloud.agent.cloud.poll-interval}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void poll() {
        if (watcher == null) {
            return;
        }
        List<NodeEvent> events = watcher.poll();
        for (NodeEvent event : events) {
            LOG.warnf("%s on %s: %s (deadline %s)", event.type(), event.nodeId(), event.detail(), event.deadline());
        }
        if (!events.isEmpty()) {
            publisher.spool(events.stream()
                    .map(e -> EventPublisher.record(Topics.NODE_EVENTS, e.nodeId(), e, e.nodeId())).toList());
        }
    }
}
