package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.RunningAllocation;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Tells the control plane about this agent's hosts: their description on gpu.inventory at start
 * and every inventory interval (the topic is compacted, so the last one stands), one telemetry
 * sample per host per telemetry interval (shed oldest first while the broker is away), and a
 * tombstone per host when the agent shuts down, so that the hosts leave the inventory. Each sample
 * also lists the allocations the host runs, so the scheduler can reconcile them with its own.
 */
@ApplicationScoped
public class HostReporter {

    private static final Logger LOG = Logger.getLogger(HostReporter.class);
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(10);

    private final GpuBackend backend;
    private final AllocationRunner runner;
    private final EventPublisher publisher;
    /** MIG instance UUID to its slot ({@code profile@start}), from the inventory last published, by host. */
    private final Map<String, Map<String, String>> migSlots = new ConcurrentHashMap<>();

    public HostReporter(GpuBackend backend, AllocationRunner runner, EventPublisher publisher) {
        this.backend = backend;
        this.runner = runner;
        this.publisher = publisher;
    }

    @Scheduled(identity = "gpu-telemetry", every = "${gpucloud.agent.telemetry-interval}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void sampleTelemetry() {
        Map<String, List<AllocationReport>> running = running();
        for (TelemetrySample sample : backend.sample()) {
            if (runner.owns(sample.nodeId())) {
                sample = sample.withAllocations(running.getOrDefault(sample.nodeId(), List.of()));
            }
            publisher.sendTelemetry(EventPublisher.record(Topics.GPU_TELEMETRY, sample.nodeId(), sample, sample.nodeId()));
        }
    }

    /** What each host runs now, as the samples report it. */
    Map<String, List<AllocationReport>> running() {
        Map<String, List<AllocationReport>> byHost = new HashMap<>();
        for (RunningAllocation a : runner.running()) {
            String slot = a.migInstanceUuid() == null ? null
                    : migSlots.getOrDefault(a.nodeId(), Map.of()).get(a.migInstanceUuid());
            int milli = a.migInstanceUuid() == null ? a.sku().milliGpu() : 1000;
            byHost.computeIfAbsent(a.nodeId(), k -> new ArrayList<>()).add(new AllocationReport(a.allocationId(),
                    a.jobId(), a.tenant(), a.gpuIndices(), a.migInstanceUuid(), slot, milli));
        }
        return byHost;
    }

    void remember(List<HostInventory> hosts) {
        for (HostInventory h : hosts) {
            Map<String, String> slots = new HashMap<>();
            for (GpuDevice gpu : h.gpus()) {
                for (MigInstance m : gpu.migInstances()) {
                    if (m.placementStart() != null) {
                        slots.put(m.uuid(), m.profile() + "@" + m.placementStart());
                    }
                }
            }
            migSlots.put(h.nodeId(), slots);
        }
    }

    @Scheduled(identity = "gpu-inventory", every = "${gpucloud.agent.inventory-interval}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void publishInventory() {
        announce().subscribe().with(ok -> { }, e -> LOG.warnf("inventory not sent: %s", e.getMessage()));
    }

    /** Publishes every host's description; completes when the broker has them. */
    public Uni<Void> announce() {
        List<HostInventory> hosts = backend.inventory();
        remember(hosts);
        LOG.debugf("publishing inventory of %d hosts", hosts.size());
        return Uni.join().all(hosts.stream()
                        .map(h -> publisher.send(EventPublisher.record(Topics.GPU_INVENTORY, h.nodeId(), h, h.nodeId())))
                        .toList())
                .andCollectFailures().replaceWithVoid();
    }

    /** Publishes the descriptions of the named hosts only (their MIG layout changed, say). */
    public Uni<Void> announce(java.util.Collection<String> nodeIds) {
        List<HostInventory> hosts = backend.inventory().stream().filter(h -> nodeIds.contains(h.nodeId())).toList();
        remember(hosts);
        return Uni.join().all(hosts.stream()
                        .map(h -> publisher.send(EventPublisher.record(Topics.GPU_INVENTORY, h.nodeId(), h, h.nodeId())))
                        .toList())
                .andCollectFailures().replaceWithVoid();
    }

    /** Publishes a tombstone for every host: they leave the inventory. */
    public Uni<Void> leave() {
        List<String> nodeIds = backend.inventory().stream().map(HostInventory::nodeId).toList();
        return Uni.join().all(nodeIds.stream()
                        .map(id -> publisher.send(EventRecords.tombstone(Topics.GPU_INVENTORY, id, EventPublisher.source(id))))
                        .toList())
                .andCollectFailures().replaceWithVoid()
                .invoke(() -> LOG.infof("hosts %s left gpu.inventory", nodeIds));
    }

    /** Announces the hosts once the channels are wired (messaging starts on an earlier StartupEvent observer). */
    void onStart(@Observes StartupEvent event) {
        publishInventory();
    }

    void onShutdown(@Observes ShutdownEvent event) {
        try {
            leave().await().atMost(SHUTDOWN_WAIT);
        } catch (RuntimeException e) {
            LOG.warnf("could not remove hosts from gpu.inventory on shutdown: %s", e.getMessage());
        }
    }
}
