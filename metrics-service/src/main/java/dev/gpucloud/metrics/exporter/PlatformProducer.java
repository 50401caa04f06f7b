package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.gpu.FleetShard;
import dev.gpucloud.metrics.messaging.TelemetryPartitions;
import dev.gpucloud.metrics.platform.PlatformState;
import dev.gpucloud.metrics.platform.PlatformState.AdvisorSettings;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Instant;

/**
 * One platform fold per service. Events that occurred before the service started rebuild its state
 * (job.events and allocation.events are replayed from the start) without being counted again. Every shard
 * folds every job; it exports the per-host rows of its own hosts, and only shard 0 the job series.
 */
public class PlatformProducer {

    @Produces
    @Singleton
    PlatformMeters meters(MeterRegistry registry, FleetShard shard) {
        return new PlatformMeters(registry, shard.exportsFleetWideSeries());
    }

    @Produces
    @Singleton
    PlatformState platform(PlatformMeters meters, MetricsConfig config, FleetShard shard) {
        return new PlatformState(meters, Instant.now(), config.maxJobs(), new AdvisorSettings(
                config.idleUtilizationPercent(), config.idleWindow(), config.memoryPressurePercent()),
                TelemetryPartitions.hostsOf(shard));
    }
}
