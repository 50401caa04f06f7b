package dev.gpucloud.metrics.exporter;

import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.gpu.GpuFleet;
import dev.gpucloud.metrics.gpu.SampleRules;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

/**
 * One fleet per service, exported through the application's meter registry (scraped at /q/metrics),
 * with the series cap made visible: how many GPUs and series are exported, and the cap itself.
 */
public class FleetProducer {

    private static final Logger LOG = Logger.getLogger(FleetProducer.class);

    /** Which hosts this instance exports (gpucloud.metrics.shard of gpucloud.metrics.shards). */
    @Produces
    @Singleton
    FleetShard shard(MetricsConfig config) {
        FleetShard shard = new FleetShard(config.shard(), config.shards(), Topics.GPU_TELEMETRY.partitions());
        if (!shard.isWholeFleet()) {
            LOG.infof("exporting %s%s", shard, shard.exportsFleetWideSeries() ? ", and the fleet-wide series" : "");
        }
        return shard;
    }

    @Produces
    @Singleton
    GpuFleet fleet(MeterRegistry registry, MetricsConfig config) {
        DcgmGauges gauges = new DcgmGauges(registry);
        GpuFleet fleet = new GpuFleet(gauges, new TelemetryDrops(registry), config.maxGpusPerHost(), config.maxGpus(),
                new SampleRules(config.maxSampleAhead(), config.maxSampleAge(), config.telemetryRequiresInventory()));
        Gauge.builder("gpucloud.metrics.gpus", fleet, GpuFleet::gpuCount)
                .description("GPUs that have dcgm series now.").strongReference(true).register(registry);
        Gauge.builder("gpucloud.metrics.gpus.limit", fleet, GpuFleet::maxGpus)
                .description("The series cap: the most GPUs that may have series (gpucloud.metrics.max-gpus).")
                .strongReference(true).register(registry);
        Gauge.builder("gpucloud.metrics.gpu.series", gauges, DcgmGauges::seriesCount)
                .description("dcgm series exported now (one per GPU and reading).").strongReference(true)
                .register(registry);
        return fleet;
    }
}
