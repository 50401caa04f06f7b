package dev.gpucloud.contracts.events;

import java.util.List;
import java.util.Optional;

/** Every Kafka topic of gpucloud, in one place. docs/events.md describes them for consumers. */
public final class Topics {

    public static final Topic<HostInventory> GPU_INVENTORY = new Topic<>(
            "gpu.inventory", "nodeId", 3, Topic.Cleanup.COMPACT, HostInventory.class, "dev.gpucloud.inventory.v1");
    public static final Topic<TelemetrySample> GPU_TELEMETRY = new Topic<>(
            "gpu.telemetry", "nodeId", 6, Topic.Cleanup.DELETE, TelemetrySample.class, "dev.gpucloud.telemetry.v1");
    public static final Topic<NodeEvent> NODE_EVENTS = new Topic<>(
            "node.events", "nodeId", 3, Topic.Cleanup.DELETE, NodeEvent.class, "dev.gpucloud.node.event.v1");
    public static final Topic<NodeCommand> NODE_COMMANDS = new Topic<>(
            "node.commands", "nodeId", 3, Topic.Cleanup.DELETE, NodeCommand.class, "dev.gpucloud.node.command.v1");
    public static final Topic<AllocationEvent> ALLOCATION_EVENTS = new Topic<>(
            "allocation.events", "jobId", 6, Topic.Cleanup.DELETE, AllocationEvent.class,
            "dev.gpucloud.allocation.event.v1");
    public static final Topic<UsageEvent> USAGE_EVENTS = new Topic<>(
            "usage.events", "allocationId", 6, Topic.Cleanup.DELETE, UsageEvent.class, "dev.gpucloud.usage.v1");
    public static final Topic<JobRequest> JOB_REQUESTS = new Topic<>(
            "job.requests", "tenant", 3, Topic.Cleanup.DELETE, JobRequest.class, "dev.gpucloud.job.request.v1");
    public static final Topic<JobEvent> JOB_EVENTS = new Topic<>(
            "job.events", "jobId", 6, Topic.Cleanup.DELETE, JobEvent.class, "dev.gpucloud.job.event.v1");
    /** Advice about allocations (idle GPUs, memory pressure), from metrics-service, for tenants and operators. */
    public static final Topic<GpuAdvisory> GPU_ADVISORIES = new Topic<>(
            "gpu.advisories", "allocationId", 3, Topic.Cleanup.DELETE, GpuAdvisory.class, "dev.gpucloud.gpu.advisory.v1");
    /**
     * Every mutating call of the APIs, accepted or refused (who, tenant, what, when, from where, result), for
     * operators and auditors; `gpucloud audit` reads it. Kept like the other topics (retention is the broker's).
     */
    public static final Topic<AuditEvent> AUDIT_EVENTS = new Topic<>(
            "audit.events", "tenant", 3, Topic.Cleanup.DELETE, AuditEvent.class, "dev.gpucloud.audit.v1");

    /**
     * What jobs' workers write to stdout and stderr, read from their log files by the agents ({@code gpucloud logs},
     * StreamLogs). Kept a week, so a finished job's output stays readable that long; the files on the hosts keep all.
     */
    public static final Topic<JobLogChunk> JOB_LOGS = new Topic<>(
            "job.logs", "jobId", 6, Topic.Cleanup.DELETE, JobLogChunk.class, "dev.gpucloud.job.log.v1",
            java.time.Duration.ofDays(7));

    /** Dead-letter topics have one partition: they are read by people, not by a fleet of consumers. */
    public static final int DEAD_LETTER_PARTITIONS = 1;

    private static final List<Topic<?>> ALL = List.of(
            GPU_INVENTORY, GPU_TELEMETRY, NODE_EVENTS, NODE_COMMANDS,
            ALLOCATION_EVENTS, USAGE_EVENTS, JOB_REQUESTS, JOB_EVENTS, GPU_ADVISORIES, AUDIT_EVENTS, JOB_LOGS);

    private Topics() {
    }

    public static List<Topic<?>> all() {
        return ALL;
    }

    public static Optional<Topic<?>> byName(String name) {
        return ALL.stream().filter(t -> t.name().equals(name)).findFirst();
    }
}
