package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.gpu.GpuFleet;
import dev.gpucloud.metrics.gpu.GpuLabels;
import dev.gpucloud.metrics.gpu.GpuSeries;
import dev.gpucloud.metrics.platform.Advisory;
import dev.gpucloud.metrics.platform.PlatformState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The platform's current levels as gauges, recomputed from {@link PlatformState} every
 * platform-refresh: a row that is gone (a tenant with no job left) loses its series. Where several shards
 * split the fleet, each exports the rows of its own hosts (GPUs by model, held GPUs, cost, advisories), and
 * shard 0 alone the rows that belong to no host (jobs by state, checkpoint age, refused jobs).
 */
@Startup
@ApplicationScoped
public class PlatformGauges {

    private final PlatformState platform;
    private final GpuFleet fleet;
    private final boolean fleetWide;
    private final MultiGauge jobs;
    private final MultiGauge gpusCapacity;
    private final MultiGauge gpusAllocated;
    private final MultiGauge gpusIdle;
    private final MultiGauge costPerHour;
    private final MultiGauge checkpointAge;
    private final MultiGauge gpuAllocation;
    private final MultiGauge advisories;

    public PlatformGauges(PlatformState platform, GpuFleet fleet, MeterRegistry registry, FleetShard shard) {
        this.platform = platform;
        this.fleet = fleet;
        this.fleetWide = shard.exportsFleetWideSeries();
        jobs = MultiGauge.builder("gpucloud.jobs")
                .description("Unfinished jobs by state and tenant (from job.events).").register(registry);
        gpusCapacity = MultiGauge.builder("gpucloud.gpus.capacity")
                .description("GPUs the hosts describe (gpu.inventory), by model and capacity type.").register(registry);
        gpusAllocated = MultiGauge.builder("gpucloud.gpus.allocated")
                .description("GPUs held by placed jobs, by model and capacity type.").register(registry);
        gpusIdle = MultiGauge.builder("gpucloud.gpus.idle")
                .description("Held GPUs whose allocation is advised idle (under the utilization threshold for the "
                        + "idle window), by model and capacity type.").register(registry);
        costPerHour = MultiGauge.builder("gpucloud.tenant.cost.per.hour")
                .description("What each tenant's placed jobs cost per hour at the hosts' list price, in currency units.")
                .register(registry);
        checkpointAge = MultiGauge.builder("gpucloud.checkpoint.age.max.seconds")
                .description("Per tenant, seconds since the oldest last checkpoint among its running jobs.")
                .register(registry);
        gpuAllocation = MultiGauge.builder("gpucloud.gpu.allocation")
                .description("1 for each GPU held by an allocation, with its job and tenant; join on UUID with the "
                        + "DCGM_ series.").register(registry);
        advisories = MultiGauge.builder("gpucloud.allocation.advisory")
                .description("Allocations advised now: idle (value: mean GPU utilization %) or memory_pressure "
                        + "(value: highest GPU memory use %).").register(registry);
        if (fleetWide) {
            Gauge.builder("gpucloud.metrics.jobs.refused", platform, PlatformState::jobsRefused)
                    .description("Jobs not followed because max-jobs were already followed.").strongReference(true)
                    .register(registry);
        }
        refresh();
    }

    /** Recomputes every level gauge from the fold now (every platform-refresh, and once at start). */
    @Scheduled(every = "${gpucloud.metrics.platform-refresh}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    public void refresh() {
        if (fleetWide) {
            jobs.register(platform.jobCounts().stream()
                    .map(c -> MultiGauge.Row.of(Tags.of("state", c.state().name(), "tenant", c.tenant()), c.jobs()))
                    .toList(), true);
            checkpointAge.register(platform.checkpointAgeSeconds(Instant.now()).entrySet().stream()
                    .map(e -> MultiGauge.Row.of(Tags.of("tenant", e.getKey()), e.getValue())).toList(), true);
        }
        var gpus = platform.gpuCounts();
        gpusCapacity.register(gpus.stream().map(c -> MultiGauge.Row.of(gpuTags(c), c.total())).toList(), true);
        gpusAllocated.register(gpus.stream().map(c -> MultiGauge.Row.of(gpuTags(c), c.allocated())).toList(), true);
        gpusIdle.register(gpus.stream().map(c -> MultiGauge.Row.of(gpuTags(c), c.idle())).toList(), true);
        costPerHour.register(platform.costPerHour().entrySet().stream()
                .map(e -> MultiGauge.Row.of(Tags.of("tenant", e.getKey()), e.getValue())).toList(), true);
        gpuAllocation.register(allocationRows(), true);
        advisories.register(platform.activeAdvisories().stream()
                .map(a -> MultiGauge.Row.of(advisoryTags(a), a.value())).toList(), true);
    }

    private List<MultiGauge.Row<?>> allocationRows() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (PlatformState.GpuAssignment held : platform.gpuAssignments()) {
            GpuLabels labels = null;
            for (GpuSeries gpu : fleet.gpusOf(held.nodeId())) {
                if (gpu.labels().gpu().equals(String.valueOf(held.gpuIndex()))) {
                    labels = gpu.labels();
                }
            }
            rows.add(MultiGauge.Row.of(Tags.of(
                    GpuLabels.HOSTNAME, labels == null ? "" : labels.hostname(),
                    GpuLabels.UUID, labels == null ? "" : labels.uuid(),
                    GpuLabels.GPU, String.valueOf(held.gpuIndex()),
                    "node", held.nodeId(),
                    "job", held.jobId(),
                    "tenant", held.tenant(),
                    "allocation", held.allocationId()), 1));
        }
        return rows;
    }

    private static Tags gpuTags(PlatformState.GpuCount count) {
        return Tags.of("model", count.model(), "capacity_type", count.capacityType().name());
    }

    private static Tags advisoryTags(Advisory advisory) {
        return Tags.of("kind", advisory.kind().label(), "tenant", advisory.tenant(), "job", advisory.jobId(),
                "allocation", advisory.allocationId(), "node", advisory.nodeId());
    }
}
