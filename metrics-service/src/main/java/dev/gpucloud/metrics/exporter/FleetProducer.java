package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.gpu.GpuFleet;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** One fleet per service, exported through the application's meter registry (scraped at /q/metrics). */
public class FleetProducer {

    @Produces
    @Singleton
    GpuFleet fleet(MeterRegistry registry, MetricsConfig config) {
        return new GpuFleet(new DcgmGauges(registry), config.maxGpusPerHost(), config.maxGpus());
    }
}
