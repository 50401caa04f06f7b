package dev.gpucloud.scheduler.service.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** The scheduler service's settings, under {@code gpucloud.scheduler}. */
@ConfigMapping(prefix = "gpucloud.scheduler")
public interface SchedulerConfig {

    /** The ce_source of every record this service publishes. */
    @WithDefault("scheduler-service")
    String source();

    /** The longest one operation (and its transaction) may take before the next one is let through. */
    @WithDefault("30s")
    Duration operationTimeout();

    /** How often leftover outbox records (e.g. after a broker outage) are retried. */
    @WithDefault("2s")
    Duration outboxRetryInterval();

    /** How often pending jobs are tried again even when nothing changed (e.g. after a missed event). */
    @WithDefault("10s")
    Duration rescheduleInterval();

    /** A host with no telemetry for this long takes no new work (its agent may be gone). */
    @WithDefault("45s")
    Duration hostTimeout();

    /** ListJobs page size when the caller gives none. */
    @WithDefault("50")
    int defaultPageSize();

    /** The largest ListJobs page a caller may ask for. */
    @WithDefault("500")
    int maxPageSize();

    /** Where workers write checkpoints when the job's policy names no location. */
    @WithDefault("/var/lib/gpucloud/checkpoints")
    String defaultCheckpointRoot();
}
