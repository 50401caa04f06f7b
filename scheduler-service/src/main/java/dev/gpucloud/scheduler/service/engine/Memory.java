package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.allocationRecord;
import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.plugins.FragmentationGradientScore;
import dev.gpucloud.scheduler.liveness.AllocationReconciler;
import dev.gpucloud.scheduler.liveness.HostLiveness;
import dev.gpucloud.scheduler.liveness.HostReports;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.Las;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.state.Admission;
import dev.gpucloud.scheduler.state.SchedulerState;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * What the scheduler holds in memory, and the one way its work changes there: replaying rows. The cluster
 * model ({@link Fleet}) follows the hosts; the queue, the running jobs, the held GPUs and the stop requests
 * ({@link SchedulerState}) follow the rows of {@code jobs} and {@code allocations}: those each operation
 * committed ({@link #apply}), every open row at a takeover ({@link #replayOpen}), and the rows the leader
 * wrote since a standby's last read ({@link #replayChanged}). Owned by the engine's serial executor.
 */
final class Memory {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final SchedulerConfig config;
    private final JobRows rows;
    final Fleet fleet = new Fleet();
    /** Learns the shapes of accepted jobs, so packing keeps room for what the cluster runs (FGD). */
    final FragmentationGradientScore fragmentation = new FragmentationGradientScore(1000);
    /** The latest word from each host since the cluster model last took it in. */
    final HostReports heard = new HostReports();
    /** Loses allocations on evidence only; silence counts from when this instance began to listen. */
    final HostLiveness liveness;
    SchedulerState state;
    /** What agents say they run against what the scheduler holds. */
    AllocationReconciler reconciler;
    /** The pending reason each queued job was last given, so an unchanged one is not written again. */
    final Map<String, String> lastReason = new HashMap<>();

    /** When a pass last stored every changed reason ({@code SchedulingTurn.REASONS_REFRESH_MILLIS}). */
    long reasonsWrittenAt;
    /** Why a requeued job went back to the queue, kept in its pending reason until it is placed again. */
    final Map<String, String> requeueNotes = new HashMap<>();

    Memory(SchedulerConfig config, JobRows rows) {
        this.config = config;
        this.rows = rows;
        this.liveness = new HostLiveness(config.hostLostTimeout().toMillis(), System.currentTimeMillis());
        this.reconciler = new AllocationReconciler(config.reconcileGrace().toMillis());
        this.state = new SchedulerState(fleet, newQueue());
    }

    /**
     * How long an allocation's end is worth knowing: a host's report from up to that long before (telemetry
     * in flight, or the host's last word before it fell silent) may still list it as running.
     */
    static Duration recentEnds(SchedulerConfig config) {
        return config.hostTimeout().compareTo(config.reconcileGrace()) > 0
                ? config.hostTimeout().plus(config.reconcileGrace()) : config.reconcileGrace().multipliedBy(2);
    }

    /** The service's {@code gpucloud.scheduler.las} settings as scheduler-core's rules; refused with why when bad. */
    static Las las(SchedulerConfig.Las c) {
        if (!c.enabled()) {
            return Las.OFF;
        }
        try {
            return new Las(c.firstLimitGpuSeconds(), c.factor(), c.levels(), c.minRun().toMillis(), c.starveFactor(),
                    c.starveAfter().toMillis());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("gpucloud.scheduler.las: " + e.getMessage(), e);
        }
    }

    private JobQueue newQueue() {
        JobQueue q = new JobQueue();
        q.setDefaultQuota(Admission.parseQuota("gpucloud.scheduler.default-quota", config.defaultQuota()));
        q.setLas(las(config.las()));
        config.quota().forEach((tenant, value) -> q.setQuota(tenant,
                Admission.parseQuota("gpucloud.scheduler.quota." + tenant, value)));
        return q;
    }

    /** Forgets jobs, allocations and the queue; the fleet (inventory and telemetry) stays. */
    void reset() {
        for (Assignment a : List.copyOf(fleet.assignments())) {
            fleet.unreserve(a.allocationId());
        }
        state = new SchedulerState(fleet, newQueue());
        lastReason.clear();
        requeueNotes.clear();
        reconciler = new AllocationReconciler(config.reconcileGrace().toMillis());
        refreshCapacity();
    }

    /** The fleet's size, as fair share divides it. */
    void refreshCapacity() {
        long milli = 0;
        long cpu = 0;
        for (NodeState n : fleet.nodes()) {
            milli += 1000L * n.gpuCount();
            cpu += n.cpuMillis();
        }
        state.queue().setClusterCapacity(milli, cpu);
    }

    /** Takes what hosts said since the last operation into the cluster model and the reconciler. */
    void takeInWhatHostsSaid() {
        heard.takeInto(fleet, reconciler, System.currentTimeMillis() - config.hostLostTimeout().toMillis());
    }

    /**
     * What one operation changed, once its transaction committed: allocations first (a GPU may have changed
     * hands), then the GPUs that refused STARTs showed others hold, then the jobs, then the texts.
     */
    void apply(Changes changes) {
        long now = System.currentTimeMillis();
        for (AllocationRecord a : changes.allocations.values()) {
            state.replay(a);
            if (a instanceof AllocationRecord.Released) {
                reconciler.ended(a.allocationId(), now);
            }
        }
        for (Changes.Busy b : changes.busy) { // after the refused allocations gave their GPUs back
            for (Assignment hold : reconciler.busy(fleet, b.refused(), b.atMillis(), b.heldBy())) {
                fleet.reserve(hold);
                LOG.warnf("host %s refused %s: %s still runs on GPUs %s, which this scheduler counted free: holding"
                        + " them until the host says it no longer runs it", hold.nodeId(), b.refused().allocationId(),
                        hold.allocationId(), hold.gpuIndices());
            }
        }
        for (JobRecord j : changes.jobs.values()) {
            state.replay(j);
            if (!(j instanceof JobRecord.Queued)) {
                lastReason.remove(j.jobId());
                requeueNotes.remove(j.jobId());
            }
        }
        lastReason.putAll(changes.reasons);
        requeueNotes.putAll(changes.notes);
    }

    /**
     * Replays every open row into an empty memory, through the same {@link SchedulerState#replay} the live
     * path uses: recently ended allocations, held GPUs, then running jobs and the queue in submission order.
     * Jobs whose spec cannot be read go to {@code unreadable}. Returns what it restored, for the log.
     */
    String replayOpen(StateReads.OpenWork open, Set<String> unreadable) {
        List<AllocationEntity> allocs = open.held();
        open.ended().forEach(this::ended);
        Map<String, JobEntity> byId = new HashMap<>();
        open.jobs().forEach(j -> byId.put(j.id, j));
        Map<String, List<AllocationEntity>> byJob = new HashMap<>();
        for (AllocationEntity a : allocs) {
            JobEntity job = byId.get(a.jobId);
            hold(a, job == null ? "" : job.tenant);
            byJob.computeIfAbsent(a.jobId, k -> new ArrayList<>()).add(a);
        }
        int queued = 0;
        for (JobEntity job : open.jobs()) {
            JobSpec spec = readableSpec(job);
            if (spec == null) {
                unreadable.add(job.id); // failed once restored; the rest comes back as it was
                continue;
            }
            if (replayJob(job, spec, byJob.getOrDefault(job.id, List.of())) instanceof JobRecord.Queued) {
                queued++;
            }
        }
        return allocs.size() + " held allocation(s), " + state.running().size() + " running and "
                + queued + " queued job(s)" + (unreadable.isEmpty() ? ""
                        : "; " + unreadable.size() + " job(s) with an unreadable spec to fail");
    }

    /**
     * Replays changed rows: allocations that gave their GPUs back first (a GPU may have changed hands), then
     * those that hold them, then the jobs; an open job whose spec cannot be read goes to {@code unreadable}.
     * Returns how many rows it replayed.
     */
    int replayChanged(StateReads.Changed changed, Set<String> unreadable) {
        for (AllocationEntity a : changed.allocations()) {
            if (!a.isActive()) {
                ended(a);
            }
        }
        reconciler.forgetEndsBefore(System.currentTimeMillis() - recentEnds(config).toMillis());
        for (AllocationEntity a : changed.allocations()) {
            if (a.isActive()) {
                hold(a, changed.tenants().getOrDefault(a.jobId, ""));
            }
        }
        for (JobEntity job : changed.jobs()) {
            JobSpec spec = job.state.isFinal() ? null : readableSpec(job);
            if (!job.state.isFinal() && spec == null) {
                unreadable.add(job.id);
                continue;
            }
            unreadable.remove(job.id);
            replayJob(job, spec, changed.heldByJob().getOrDefault(job.id, List.of()));
        }
        return changed.allocations().size() + changed.jobs().size();
    }

    private JobRecord replayJob(JobEntity job, JobSpec spec, List<AllocationEntity> allocs) {
        JobRecord record = rows.jobRecord(job, spec, allocs);
        state.replay(record);
        if (record instanceof JobRecord.Queued q) {
            fragmentation.observe(q.entry().request());
            // what the database already says, so that the first pass after a restore rewrites only what changed
            lastReason.put(job.id, job.reason == null ? "" : job.reason);
        } else {
            lastReason.remove(job.id);
        }
        return record;
    }

    /** Takes a held allocation read back from the database in; one that cannot be held is logged and left out. */
    private void hold(AllocationEntity a, String tenant) {
        String problem = state.replay(allocationRecord(a, tenant));
        if (problem != null) {
            LOG.errorf("%s of %s on %s is held in the database but cannot be in memory (%s): left out; its host's"
                    + " reports decide", a.id, a.jobId, a.nodeId, problem);
        }
    }

    /**
     * The allocation ended: its GPUs are free, and the reconciler will not take a host's older report that
     * still lists it for an allocation the scheduler does not know (and hold its GPUs).
     */
    private void ended(AllocationEntity a) {
        state.replay(new AllocationRecord.Released(a.id));
        long now = System.currentTimeMillis();
        long at = a.endedAt == null ? now : a.endedAt.toEpochMilli();
        if (at > now - recentEnds(config).toMillis()) {
            reconciler.ended(a.id, at);
        }
    }
}
