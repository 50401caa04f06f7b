package dev.gpucloud.metrics.exporter;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.metrics.platform.Advisory;
import dev.gpucloud.metrics.platform.InterruptionCause;
import dev.gpucloud.metrics.platform.PlatformSignals;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The platform's countable happenings as Prometheus counters and the queue-wait histogram. Label
 * values come from closed sets (states, causes, event types, capacity types) or from tenants, which
 * the scheduler validates; meters are cached so a signal costs a map lookup. The job series (queue wait,
 * placements, interruptions, finished jobs, lost allocations) come from topics every shard reads whole, so only
 * the shard that exports the fleet-wide series counts them; node.events and usage.events are split between the
 * shards by their consumer group, and an advisory is raised by the shard of its host, so each counts its own.
 */
public final class PlatformMeters implements PlatformSignals {

    private static final Logger LOG = Logger.getLogger(PlatformMeters.class);

    /** Queue-wait buckets: from seconds (an idle cluster) to hours (a full one). */
    static final Duration[] QUEUE_WAIT_BUCKETS = {
        Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(30),
        Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10),
        Duration.ofMinutes(30), Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(6)};

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final boolean fleetWide;
    /** Null where this instance does not export the fleet-wide series. */
    private final Timer queueWait;
    private volatile java.util.function.Consumer<Advisory> advisoryListener = a -> { };

    /** Meters of an instance that exports the whole fleet. */
    public PlatformMeters(MeterRegistry registry) {
        this(registry, true);
    }

    /** @param fleetWide whether this instance counts the job series (shard 0 of several, or the only instance) */
    public PlatformMeters(MeterRegistry registry, boolean fleetWide) {
        this.registry = registry;
        this.fleetWide = fleetWide;
        this.queueWait = !fleetWide ? null : Timer.builder("gpucloud.queue.wait")
                .description("How long jobs waited in the queue, from PENDING to SCHEDULED.")
                .serviceLevelObjectives(QUEUE_WAIT_BUCKETS)
                .register(registry);
    }

    /** Also tells {@code listener} of every advisory (to publish it), besides counting and logging it. */
    public void onAdvisory(java.util.function.Consumer<Advisory> listener) {
        this.advisoryListener = listener;
    }

    @Override
    public void queued(String tenant, Duration wait) {
        if (fleetWide) {
            queueWait.record(wait);
        }
    }

    @Override
    public void placed(String tenant) {
        if (!fleetWide) {
            return;
        }
        counter("gpucloud.placements", "Jobs placed (PENDING to SCHEDULED).", "tenant", tenant).increment();
    }

    @Override
    public void interrupted(String tenant, InterruptionCause cause, double lostGpuSeconds) {
        if (!fleetWide) {
            return;
        }
        counter("gpucloud.job.interruptions", "Jobs that held GPUs and went back to PENDING, by cause.",
                "tenant", tenant, "cause", cause.label()).increment();
        counter("gpucloud.lost.gpu.seconds", "GPU-seconds of work lost since the last checkpoint by interrupted jobs.",
                "tenant", tenant, "cause", cause.label()).increment(lostGpuSeconds);
    }

    @Override
    public void finished(String tenant, JobState state) {
        if (!fleetWide) {
            return;
        }
        counter("gpucloud.jobs.finished", "Jobs that reached a final state.", "tenant", tenant,
                "state", state.name()).increment();
    }

    @Override
    public void nodeEvent(NodeEventType type, CapacityType capacityType) {
        counter("gpucloud.node.events", "Events on node.events by type and the host's capacity type.",
                "type", type.name(), "capacity_type", capacityType == null ? "" : capacityType.name()).increment();
    }

    @Override
    public void allocationLost() {
        if (!fleetWide) {
            return;
        }
        counter("gpucloud.allocations.lost", "Allocations their host reported LOST.").increment();
    }

    @Override
    public void used(String tenant, CapacityType capacityType, double gpuSeconds) {
        counter("gpucloud.usage.gpu.seconds", "GPU-seconds of usage reported on usage.events, each second once.",
                "tenant", tenant, "capacity_type", capacityType.name()).increment(gpuSeconds);
    }

    @Override
    public void advised(Advisory advisory) {
        counter("gpucloud.advisories", "Advisories raised: allocations idle below the utilization threshold, or "
                + "past the memory threshold.", "kind", advisory.kind().label(), "tenant", advisory.tenant()).increment();
        LOG.infof("advisory %s: allocation %s of job %s (tenant %s) on %s since %s, %.1f%%", advisory.kind().label(),
                advisory.allocationId(), advisory.jobId(), advisory.tenant(), advisory.nodeId(), advisory.since(),
                advisory.value());
        advisoryListener.accept(advisory);
    }

    private Counter counter(String name, String help, String... tags) {
        String key = name + String.join("\u0000", tags);
        return counters.computeIfAbsent(key, (Function<String, Counter>) k -> Counter.builder(name)
                .description(help).tags(tags).register(registry));
    }
}
