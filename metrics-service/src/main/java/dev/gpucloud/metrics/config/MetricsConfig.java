package dev.gpucloud.metrics.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** metrics-service's own settings; Kafka and HTTP settings are Quarkus's, in application.properties. */
@ConfigMapping(prefix = "gpucloud.metrics")
public interface MetricsConfig {

    /**
     * Which shard this instance is, 0 to shards-1: it reads the gpu.telemetry partitions whose number modulo shards is
     * this, and exports those hosts' series; shard 0 also exports the fleet-wide series (a StatefulSet's pod ordinal).
     */
    @WithDefault("0")
    int shard();

    /** How many instances split the fleet's hosts between them (1 to gpu.telemetry's partition count); 1 exports every host. */
    @WithDefault("1")
    int shards();

    /** How long a host that sends no telemetry keeps its series before they are removed (it crashed without a tombstone). */
    @WithDefault("5m")
    Duration staleAfter();

    /**
     * A telemetry sample dated more than this after it arrives is dropped and counted (reason future_sample): a
     * host with a broken clock would otherwise freeze its own series, since every later sample looks older.
     */
    @WithDefault("5m")
    Duration maxSampleAhead();

    /** A telemetry sample dated more than this before it arrives is dropped and counted (reason old_sample). */
    @WithDefault("10m")
    Duration maxSampleAge();

    /**
     * Whether telemetry of a host that no gpu.inventory record describes is dropped and counted (reason
     * unknown_host) rather than becoming series of a host the fleet does not have.
     */
    @WithDefault("true")
    boolean telemetryRequiresInventory();

    /** How often hosts are checked against stale-after; a quiet host's series last at most stale-after plus this. */
    @WithDefault("30s")
    Duration sweepInterval();

    /** The most GPUs one telemetry sample may list; a larger sample is dead-lettered (an HGX host has 8). */
    @WithDefault("64")
    int maxGpusPerHost();

    /** The most GPUs that have series at once; a sample that would add more is dead-lettered, which bounds the scrape. */
    @WithDefault("20000")
    int maxGpus();

    /** An allocation whose GPUs' mean utilization stays below this (%) for idle-window is advised as idle (the seeds' 70%). */
    @WithDefault("70")
    double idleUtilizationPercent();

    /** How long an allocation must stay below idle-utilization-percent before it is advised as idle. */
    @WithDefault("10m")
    Duration idleWindow();

    /** An allocation whose busiest GPU uses more of its memory than this (%) is advised as under memory pressure (20% headroom). */
    @WithDefault("80")
    double memoryPressurePercent();

    /** The most unfinished jobs followed from job.events; a job beyond it is not tracked, which bounds memory. */
    @WithDefault("100000")
    int maxJobs();

    /** How often the platform gauges (jobs by state, GPUs allocated, cost rate, checkpoint age) are recomputed. */
    @WithDefault("5s")
    Duration platformRefresh();

    /** Whether consumer lag is read from the broker (Kafka's AdminClient) and exported. */
    @WithDefault("true")
    boolean lagEnabled();

    /** How often consumer lag is read from the broker. */
    @WithDefault("30s")
    Duration lagInterval();

    /** Which consumer groups get a lag series (a Java regular expression matched against the whole group id). */
    @WithDefault(".*")
    String lagGroups();

    /** The most (group, topic) lag series exported; the rest (by group name) are left out. */
    @WithDefault("500")
    int maxLagSeries();
}
