package dev.gpucloud.metrics.platform;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.events.WorkerPlacement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The platform as the event streams tell it: the jobs that are not finished (their state, tenant,
 * placement and last checkpoint), the hosts' GPUs with their model, capacity type and price, and
 * which allocation holds which GPU. Current levels are read as snapshots; countable happenings
 * (placements, queue waits, interruptions, usage, advisories) go to {@link PlatformSignals}.
 *
 * <p>Events that occurred before {@code countFrom} (a replay of history after a restart) rebuild
 * the state but are not counted again, so a restart does not show as a burst of placements.
 * All methods take the state's lock; times are passed in, so the rules are testable.
 */
public final class PlatformState {

    /** Jobs by state and tenant; only states that are not final (those are counted as they happen). */
    public record JobCount(JobState state, String tenant, long jobs) {
    }

    /** GPUs of one model and capacity type: all that hosts describe, those held by allocations, and the held ones flagged idle. */
    public record GpuCount(String model, CapacityType capacityType, long total, long allocated, long idle) {
    }

    /** One GPU held by an allocation, for the per-GPU job and tenant labels. */
    public record GpuAssignment(String nodeId, int gpuIndex, String jobId, String tenant, String allocationId) {
    }

    /** Settings of the idle and memory-pressure advice. */
    public record AdvisorSettings(double idleBelowPercent, Duration idleWindow, double memoryPressurePercent) {
        public AdvisorSettings {
            if (!(idleBelowPercent > 0 && idleBelowPercent <= 100)) {
                throw new IllegalArgumentException("idleBelowPercent must be within (0, 100], was " + idleBelowPercent);
            }
            if (idleWindow == null || idleWindow.isNegative()) {
                throw new IllegalArgumentException("idleWindow must be zero or more, was " + idleWindow);
            }
            if (!(memoryPressurePercent > 0 && memoryPressurePercent <= 100)) {
                throw new IllegalArgumentException("memoryPressurePercent must be within (0, 100], was "
                        + memoryPressurePercent);
            }
        }

        /** The seeds' targets: GPUs busier than 70%, 20% memory headroom; idle after 10 minutes. */
        public static AdvisorSettings defaults() {
            return new AdvisorSettings(70, Duration.ofMinutes(10), 80);
        }
    }

    private static final int USAGE_MARKS = 200_000;

    private final PlatformSignals signals;
    private final Instant countFrom;
    private final int maxJobs;
    private final AdvisorSettings advice;
    private final Map<String, Job> jobs = new HashMap<>();
    private final Map<String, Host> hosts = new HashMap<>();
    private final Map<String, Map<String, Allocation>> allocationsByNode = new HashMap<>();
    /** Per allocation, the end of the usage already counted; the oldest entries go first. */
    private final Map<String, Instant> usageCountedUntil = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > USAGE_MARKS;
        }
    };
    private long jobsRefused;
    private final Predicate<String> exportsHost;

    /**
     * @param countFrom events that occurred before this instant rebuild the state without being counted
     * @param maxJobs the most unfinished jobs tracked; a job beyond it is refused (and counted), which bounds memory
     */
    public PlatformState(PlatformSignals signals, Instant countFrom, int maxJobs, AdvisorSettings advice) {
        this(signals, countFrom, maxJobs, advice, nodeId -> true);
    }

    /**
     * A fold whose per-host rows (GPUs by model, held GPUs, cost, advisories) cover only the hosts {@code exportsHost}
     * accepts: one shard's, where several instances split the fleet and each exports its own hosts.
     */
    public PlatformState(PlatformSignals signals, Instant countFrom, int maxJobs, AdvisorSettings advice,
            Predicate<String> exportsHost) {
        this.exportsHost = exportsHost;
        if (maxJobs < 1) {
            throw new IllegalArgumentException("maxJobs must be at least 1, was " + maxJobs);
        }
        this.signals = signals;
        this.countFrom = countFrom;
        this.maxJobs = maxJobs;
        this.advice = advice;
    }

    // --- folding the streams ---

    /** A host's description (gpu.inventory). */
    public synchronized void describe(HostInventory inventory) {
        Map<Integer, String> models = new HashMap<>();
        for (GpuDevice gpu : inventory.gpus()) {
            models.put(gpu.index(), gpu.model());
        }
        long perGpu = inventory.gpus().isEmpty() ? 0 : inventory.priceMicrosPerHour() / inventory.gpus().size();
        hosts.put(inventory.nodeId(), new Host(inventory.capacityType(), perGpu, models));
    }

    /** The host left (a tombstone on gpu.inventory). */
    public synchronized void leave(String nodeId) {
        hosts.remove(nodeId);
    }

    /** A change in a job's lifecycle (job.events). An event older than the job's latest changes nothing. */
    public synchronized void job(JobEvent event) {
        Job job = jobs.get(event.jobId());
        if (job == null) {
            if (event.state().isFinal()) {
                count(event, () -> signals.finished(event.tenant(), event.state()));
                return;
            }
            if (jobs.size() >= maxJobs) {
                jobsRefused++;
                return;
            }
            job = new Job(event.jobId(), event.tenant());
            jobs.put(job.id, job);
        } else if (event.occurredAt().isBefore(job.lastEventAt)) {
            return;
        }
        transition(job, event);
    }

    private void transition(Job job, JobEvent event) {
        JobState previous = job.state;
        job.lastEventAt = event.occurredAt();
        switch (event.state()) {
            case WAITING_FOR_DEPENDENCIES -> place(job, List.of()); // not in the queue yet: its wait starts later
            case PENDING -> {
                // back in line after it held GPUs: an interruption; released by its dependencies: its first wait
                if (previous != null && previous != JobState.PENDING
                        && previous != JobState.WAITING_FOR_DEPENDENCIES) {
                    double lost = lostGpuSeconds(job, event.occurredAt());
                    InterruptionCause cause = InterruptionCause.of(event.reason());
                    count(event, () -> signals.interrupted(job.tenant, cause, lost));
                }
                job.pendingSince = event.occurredAt();
                job.runningSince = null;
                place(job, List.of());
            }
            case SCHEDULED -> {
                if (previous == JobState.PENDING && job.pendingSince != null) {
                    Duration wait = Duration.between(job.pendingSince, event.occurredAt());
                    count(event, () -> signals.queued(job.tenant, wait.isNegative() ? Duration.ZERO : wait));
                }
                if (previous == null || previous == JobState.PENDING) {
                    count(event, () -> signals.placed(job.tenant));
                }
                place(job, event.placement());
            }
            case RUNNING, CHECKPOINTING -> {
                if (job.runningSince == null) {
                    job.runningSince = event.occurredAt();
                }
                if (!event.placement().isEmpty()) {
                    place(job, event.placement());
                }
            }
            case SUCCEEDED, FAILED, CANCELLED -> {
                place(job, List.of());
                jobs.remove(job.id);
                count(event, () -> signals.finished(job.tenant, event.state()));
            }
        }
        job.state = event.state();
        for (Allocation allocation : job.allocations) {
            allocation.running = job.state == JobState.RUNNING || job.state == JobState.CHECKPOINTING;
        }
    }

    /** Something that happened to an allocation (allocation.events): checkpoints and losses. */
    public synchronized void allocation(AllocationEvent event) {
        if (event.type() == AllocationEventType.CHECKPOINT_SAVED) {
            Job job = jobs.get(event.jobId());
            if (job != null && (job.lastCheckpointAt == null || event.occurredAt().isAfter(job.lastCheckpointAt))) {
                job.lastCheckpointAt = event.occurredAt();
            }
        } else if (event.type() == AllocationEventType.LOST && !event.occurredAt().isBefore(countFrom)) {
            signals.allocationLost();
        }
    }

    /** Something that happened to a host (node.events). */
    public synchronized void node(NodeEvent event) {
        if (event.occurredAt().isBefore(countFrom)) {
            return;
        }
        Host host = hosts.get(event.nodeId());
        signals.nodeEvent(event.type(), host == null ? null : host.capacityType);
    }

    /**
     * Usage reported for an allocation (usage.events). Only the part after what was already counted
     * for that allocation counts, so a repeated or overlapping report adds nothing.
     */
    public synchronized void usage(UsageEvent event) {
        Instant counted = usageCountedUntil.get(event.allocationId());
        Instant from = counted != null && counted.isAfter(event.from()) ? counted : event.from();
        if (!event.to().isAfter(from)) {
            return;
        }
        usageCountedUntil.put(event.allocationId(), event.to());
        double seconds = Duration.between(from, event.to()).toMillis() / 1000.0;
        double gpus = event.units() * event.sku().milliGpu() / 1000.0;
        signals.used(event.tenant(), event.capacityType(), gpus * seconds);
    }

    /**
     * A host's telemetry sample: the allocations on it are checked against the idle and
     * memory-pressure thresholds, and an advisory is raised when one starts to hold. Costs nothing for
     * a host without allocations.
     */
    public synchronized void observe(TelemetrySample sample) {
        Map<String, Allocation> onHost = allocationsByNode.get(sample.nodeId());
        if (onHost == null) {
            return;
        }
        for (Allocation allocation : onHost.values()) {
            if (!allocation.running) {
                continue;
            }
            double utilSum = 0;
            double memoryMax = 0;
            int found = 0;
            for (GpuReading reading : sample.gpus()) {
                if (allocation.holds(reading.index())) {
                    found++;
                    utilSum += reading.gpuUtilPercent();
                    long total = reading.memoryUsedMib() + reading.memoryFreeMib();
                    if (total > 0) {
                        memoryMax = Math.max(memoryMax, 100.0 * reading.memoryUsedMib() / total);
                    }
                }
            }
            if (found == 0) {
                continue;
            }
            adviseIdle(allocation, utilSum / found, sample.sampledAt());
            advisePressure(allocation, memoryMax, sample.sampledAt());
        }
    }

    // --- snapshots ---

    /** Unfinished jobs by state and tenant, sorted. */
    public synchronized List<JobCount> jobCounts() {
        Map<String, long[]> counts = new TreeMap<>();
        Map<String, JobCount> keys = new HashMap<>();
        for (Job job : jobs.values()) {
            if (job.state == null) {
                continue;
            }
            String key = job.state + "/" + job.tenant;
            counts.computeIfAbsent(key, k -> new long[1])[0]++;
            keys.putIfAbsent(key, new JobCount(job.state, job.tenant, 0));
        }
        List<JobCount> result = new ArrayList<>();
        counts.forEach((key, n) -> result.add(new JobCount(keys.get(key).state(), keys.get(key).tenant(), n[0])));
        return result;
    }

    /** GPUs by model and capacity type: described, allocated, and allocated but idle. */
    public synchronized List<GpuCount> gpuCounts() {
        Map<String, long[]> counts = new TreeMap<>();
        Map<String, GpuCount> keys = new HashMap<>();
        for (Map.Entry<String, Host> described : hosts.entrySet()) {
            if (!exportsHost.test(described.getKey())) {
                continue;
            }
            Host host = described.getValue();
            for (String model : host.models.values()) {
                bump(counts, keys, model, host.capacityType, 0);
            }
        }
        for (Map.Entry<String, Map<String, Allocation>> entry : allocationsByNode.entrySet()) {
            Host host = hosts.get(entry.getKey());
            if (host == null || !exportsHost.test(entry.getKey())) {
                continue;
            }
            for (Allocation allocation : entry.getValue().values()) {
                for (int index : allocation.gpuIndices) {
                    String model = host.models.get(index);
                    if (model != null) {
                        bump(counts, keys, model, host.capacityType, 1);
                        if (allocation.idle) {
                            bump(counts, keys, model, host.capacityType, 2);
                        }
                    }
                }
            }
        }
        List<GpuCount> result = new ArrayList<>();
        counts.forEach((key, n) -> result.add(new GpuCount(keys.get(key).model(), keys.get(key).capacityType(),
                n[0], n[1], n[2])));
        return result;
    }

    /**
     * What each tenant's placed jobs cost per hour, in currency units, at the list price of the hosts
     * they run on (a host's {@code priceMicrosPerHour} shared evenly by its GPUs).
     */
    public synchronized Map<String, Double> costPerHour() {
        Map<String, Double> cost = new TreeMap<>();
        for (Map.Entry<String, Map<String, Allocation>> ofHost : allocationsByNode.entrySet()) {
            if (!exportsHost.test(ofHost.getKey())) {
                continue;
            }
            Map<String, Allocation> onHost = ofHost.getValue();
            for (Allocation allocation : onHost.values()) {
                Host host = hosts.get(allocation.nodeId);
                long micros = host == null ? 0 : host.pricePerGpuMicros * allocation.gpuIndices.length;
                cost.merge(allocation.tenant, micros / 1_000_000.0, Double::sum);
            }
        }
        return cost;
    }

    /**
     * Per tenant, the oldest checkpoint among its running jobs, in seconds at {@code now}: the work
     * that an interruption would lose. A job that never saved one counts from when it started running.
     */
    public synchronized Map<String, Double> checkpointAgeSeconds(Instant now) {
        Map<String, Double> age = new TreeMap<>();
        for (Job job : jobs.values()) {
            if (job.runningSince == null) {
                continue;
            }
            Instant since = job.lastCheckpointAt != null && job.lastCheckpointAt.isAfter(job.runningSince)
                    ? job.lastCheckpointAt : job.runningSince;
            double seconds = Math.max(0, Duration.between(since, now).toMillis() / 1000.0);
            age.merge(job.tenant, seconds, Math::max);
        }
        return age;
    }

    /** Which allocation holds which GPU now. */
    public synchronized List<GpuAssignment> gpuAssignments() {
        List<GpuAssignment> result = new ArrayList<>();
        for (Map.Entry<String, Map<String, Allocation>> ofHost : allocationsByNode.entrySet()) {
            if (!exportsHost.test(ofHost.getKey())) {
                continue;
            }
            Map<String, Allocation> onHost = ofHost.getValue();
            for (Allocation allocation : onHost.values()) {
                for (int index : allocation.gpuIndices) {
                    result.add(new GpuAssignment(allocation.nodeId, index, allocation.jobId, allocation.tenant,
                            allocation.id));
                }
            }
        }
        return result;
    }

    /** The advisories that hold now: allocations still idle, or still over the memory threshold. */
    public synchronized List<Advisory> activeAdvisories() {
        List<Advisory> result = new ArrayList<>();
        for (Map.Entry<String, Map<String, Allocation>> ofHost : allocationsByNode.entrySet()) {
            if (!exportsHost.test(ofHost.getKey())) {
                continue;
            }
            Map<String, Allocation> onHost = ofHost.getValue();
            for (Allocation allocation : onHost.values()) {
                if (allocation.idle) {
                    result.add(allocation.advisory(Advisory.Kind.IDLE, allocation.idleSince, allocation.idleValue));
                }
                if (allocation.pressured) {
                    result.add(allocation.advisory(Advisory.Kind.MEMORY_PRESSURE, allocation.pressureSince,
                            allocation.pressureValue));
                }
            }
        }
        return result;
    }

    /** Jobs not tracked because {@code maxJobs} were already tracked. */
    public synchronized long jobsRefused() {
        return jobsRefused;
    }

    /** How many unfinished jobs are tracked. */
    public synchronized int jobsTracked() {
        return jobs.size();
    }

    // --- rules ---

    private void count(JobEvent event, Runnable signal) {
        if (!event.occurredAt().isBefore(countFrom)) {
            signal.run();
        }
    }

    private static double lostGpuSeconds(Job job, Instant at) {
        if (job.runningSince == null) {
            return 0;
        }
        Instant since = job.lastCheckpointAt != null && job.lastCheckpointAt.isAfter(job.runningSince)
                ? job.lastCheckpointAt : job.runningSince;
        double seconds = Math.max(0, Duration.between(since, at).toMillis() / 1000.0);
        int gpus = 0;
        for (Allocation allocation : job.allocations) {
            gpus += allocation.gpuIndices.length;
        }
        return seconds * gpus;
    }

    private void place(Job job, List<WorkerPlacement> placement) {
        for (Allocation allocation : job.allocations) {
            Map<String, Allocation> onHost = allocationsByNode.get(allocation.nodeId);
            if (onHost != null) {
                onHost.remove(allocation.id);
                if (onHost.isEmpty()) {
                    allocationsByNode.remove(allocation.nodeId);
                }
            }
        }
        List<Allocation> placed = new ArrayList<>(placement.size());
        for (WorkerPlacement worker : placement) {
            Allocation previous = null;
            for (Allocation a : job.allocations) {
                if (a.id.equals(worker.allocationId())) {
                    previous = a;
                }
            }
            Allocation allocation = new Allocation(worker.allocationId(), job.id, job.tenant, worker.nodeId(),
                    worker.gpuIndices().stream().mapToInt(Integer::intValue).distinct().toArray());
            if (previous != null && previous.nodeId.equals(allocation.nodeId)) {
                allocation.keepAdviceOf(previous);
            }
            placed.add(allocation);
            allocationsByNode.computeIfAbsent(worker.nodeId(), n -> new HashMap<>()).put(allocation.id, allocation);
        }
        job.allocations = placed;
    }

    private void adviseIdle(Allocation allocation, double utilization, Instant at) {
        if (utilization >= advice.idleBelowPercent()) {
            allocation.belowSince = null;
            allocation.idle = false;
            return;
        }
        if (allocation.belowSince == null) {
            allocation.belowSince = at;
        }
        allocation.idleValue = utilization;
        if (!allocation.idle && !at.isBefore(allocation.belowSince.plus(advice.idleWindow()))) {
            allocation.idle = true;
            allocation.idleSince = allocation.belowSince;
            signals.advised(allocation.advisory(Advisory.Kind.IDLE, allocation.idleSince, utilization));
        }
    }

    private void advisePressure(Allocation allocation, double memoryPercent, Instant at) {
        if (memoryPercent <= advice.memoryPressurePercent()) {
            allocation.pressured = false;
            return;
        }
        allocation.pressureValue = memoryPercent;
        if (!allocation.pressured) {
            allocation.pressured = true;
            allocation.pressureSince = at;
            signals.advised(allocation.advisory(Advisory.Kind.MEMORY_PRESSURE, at, memoryPercent));
        }
    }

    private static void bump(Map<String, long[]> counts, Map<String, GpuCount> keys, String model,
            CapacityType capacity, int slot) {
        String key = model + "/" + capacity;
        counts.computeIfAbsent(key, k -> new long[3])[slot]++;
        keys.putIfAbsent(key, new GpuCount(model, capacity, 0, 0, 0));
    }

    private static final class Job {
        final String id;
        final String tenant;
        JobState state;
        Instant lastEventAt = Instant.MIN;
        Instant pendingSince;
        Instant runningSince;
        Instant lastCheckpointAt;
        List<Allocation> allocations = List.of();

        Job(String id, String tenant) {
            this.id = id;
            this.tenant = tenant;
        }
    }

    private record Host(CapacityType capacityType, long pricePerGpuMicros, Map<Integer, String> models) {
    }

    private static final class Allocation {
        final String id;
        final String jobId;
        final String tenant;
        final String nodeId;
        final int[] gpuIndices;
        boolean running;
        Instant belowSince;
        boolean idle;
        Instant idleSince;
        double idleValue;
        boolean pressured;
        Instant pressureSince;
        double pressureValue;

        Allocation(String id, String jobId, String tenant, String nodeId, int[] gpuIndices) {
            this.id = id;
            this.jobId = jobId;
            this.tenant = tenant;
            this.nodeId = nodeId;
            this.gpuIndices = gpuIndices;
        }

        boolean holds(int index) {
            for (int i : gpuIndices) {
                if (i == index) {
                    return true;
                }
            }
            return false;
        }

        /** The same allocation announced again (RUNNING after SCHEDULED): its advice goes on. */
        void keepAdviceOf(Allocation previous) {
            running = previous.running;
            belowSince = previous.belowSince;
            idle = previous.idle;
            idleSince = previous.idleSince;
            idleValue = previous.idleValue;
            pressured = previous.pressured;
            pressureSince = previous.pressureSince;
            pressureValue = previous.pressureValue;
        }

        Advisory advisory(Advisory.Kind kind, Instant since, double value) {
            return new Advisory(kind, id, jobId, tenant, nodeId, since, value);
        }
    }
}
