package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.platform.PlatformState;
import dev.gpucloud.metrics.platform.PlatformState.AdvisorSettings;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Instant;

/**
 * One platform fold per service. Events that occurred before the service started rebuild its state
 * (job.events and allocation.events are replayed from the start) without being counted again.
 */
public class PlatformProducer {

    @Produces
    @Singleton
    PlatformMeters meters(MeterRegistry registry) {
        return new PlatformMeters(registry);
    }

    @Produces
    @Singleton
    PlatformState platform(PlatformMeters meters, MetricsConfig config) {
        return new PlatformState(meters, Instant.now(), config.maxJobs(), new AdvisorSettings(
                config.idleUtilizationPercent(), config.idleWindow(), config.memoryPressurePercent()));
    }
}
