package dev.gpucloud.metrics.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** metrics-service's own settings; Kafka and HTTP settings are Quarkus's, in application.properties. */
@ConfigMapping(prefix = "gpucloud.metrics")
public interface MetricsConfig {

    /** How long a host that sends no telemetry keeps its series before they are removed (it crashed without a tombstone). */
    @WithDefault("5m")
    Duration staleAfter();

    /** How often hosts are checked against stale-after; a quiet host's series last at most stale-after plus this. */
    @WithDefault("30s")
    Duration sweepInterval();

    /** The most GPUs one telemetry sample may list; a larger sample is dead-lettered (an HGX host has 8). */
    @WithDefault("64")
    int maxGpusPerHost();

    /** The most GPUs that have series at once; a sample that would add more is dead-lettered, which bounds the scrape. */
    @WithDefault("20000")
    int maxGpus();
}
