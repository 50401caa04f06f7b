package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.lifecycle.TimeLimit;
import dev.gpucloud.scheduler.lifecycle.WorkerOutcome;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.spot.SpotPolicy;
import dev.gpucloud.scheduler.state.AllocationRow;
import dev.gpucloud.scheduler.state.Dependencies;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.nio.charset.StandardCharsets;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * Rows and what scheduler-core makes of them: a job's row as its rules take it ({@link JobRow}) and back,
 * the records {@link dev.gpucloud.scheduler.state.SchedulerState} replays, the queue and running entries,
 * and the API's view of a job. Nothing here reads or writes the database.
 */
final class JobRows {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);
    /**
     * How stored specs' secret values are sealed and opened ({@link SecretSeal}): set once by the engine from
     * the configuration, before any row is read.
     */
    private static volatile SecretSeal seal = SecretSeal.NONE;

    static void sealWith(SecretSeal secrets) {
        seal = secrets;
    }

    /** A spec as {@code jobs.spec_json} stores it: its JSON, secret values sealed for the tenant. */
    static String storedSpec(String tenant, String specJson) {
        return seal.seal(tenant, specJson);
    }

    /** Whether a stored spec is the spec of {@code specJson} (both as JSON; secret values compared opened). */
    static boolean sameSpec(JobEntity job, String specJson) {
        if (job.specJson.equals(specJson)) {
            return true;
        }
        try {
            return EventCodec.mapper().readTree(seal.open(job.tenant, job.specJson))
                    .equals(EventCodec.mapper().readTree(specJson));
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    private final SchedulerConfig config;
    private final SpotPolicy spot;
    private final RetryPolicy retry;

    JobRows(SchedulerConfig config, SpotPolicy spot, RetryPolicy retry) {
        this.config = config;
        this.spot = spot;
        this.retry = retry;
    }

    /** The job's row as scheduler-core's rules take it; {@code spec} is null when it cannot be read. */
    JobRow rowOf(JobEntity job, JobSpec spec) {
        int gpuMilli = 0;
        if (spec != null) {
            PlacementRequest r = PlacementRequest.of(job.id, job.tenant, 1, spec);
            gpuMilli = r.workers() * r.milliPerWorker();
        }
        JobRun run = JobRun.restore(job.id, gpuMilli, retry, job.state, job.attempt, job.failures,
                job.interruptions, job.resumeFrom,
                job.lastCheckpointAt == null ? Long.MIN_VALUE : job.lastCheckpointAt.toEpochMilli(),
                job.runningSince == null ? Long.MIN_VALUE : job.runningSince.toEpochMilli(),
                job.lostWorkSeconds, job.lostGpuSeconds, job.attainedGpuSeconds,
                job.requeuedAt == null ? Long.MIN_VALUE : job.requeuedAt.toEpochMilli(), job.ranMillis);
        return new JobRow(job.tenant, spec == null ? 0 : spec.workers(), run, job.reason, job.exitCode, stopOf(job));
    }

    /** Writes what the rules made of the row back into the job's entity. */
    static void store(JobRow row, JobEntity job) {
        JobRun run = row.run();
        job.state = run.state();
        job.attempt = run.attempt();
        job.failures = run.failures();
        job.interruptions = run.interruptions();
        job.resumeFrom = run.resumeFrom();
        job.lastCheckpointAt = run.lastCheckpointMillis() == Long.MIN_VALUE ? null
                : Instant.ofEpochMilli(run.lastCheckpointMillis());
        job.runningSince = run.runningSinceMillis() == Long.MIN_VALUE ? null
                : Instant.ofEpochMilli(run.runningSinceMillis());
        job.lostWorkSeconds = run.lostWorkSeconds();
        job.lostGpuSeconds = run.lostGpuSeconds();
        job.attainedGpuSeconds = run.attainedGpuSeconds();
        job.ranMillis = run.ranMillis();
        job.requeuedAt = run.requeuedAtMillis() == Long.MIN_VALUE ? null : Instant.ofEpochMilli(run.requeuedAtMillis());
        job.reason = row.reason();
        job.exitCode = row.exitCode();
        setStop(job, row.stop());
        job.updatedAt = Instant.now();
    }

    /** The queue entry of a pending job: next attempt, capacity after spot fallback, pools to avoid. */
    QueuedJob queued(JobEntity job, JobSpec spec) {
        long now = System.currentTimeMillis();
        CapacityPreference capacity = job.capacity != null ? job.capacity : spec.capacity();
        long remaining = spec.runtimeEstimateSeconds();
        CapacityPreference next = spot.capacityFor(capacity, job.interruptions,
                spec.deadline() == null ? 0 : spec.deadline().toEpochMilli(), now, remaining);
        if (next != capacity) {
            LOG.infof("%s: %s", job.id, spot.fallbackReason(job.interruptions));
            job.capacity = next;
        }
        PlacementRequest request = PlacementRequest.of(job.id, job.tenant, job.attempt + 1, spec).withCapacity(next);
        if (job.interruptions > 0) {
            request = request.withAvoidPools(spot.avoidedPools(now));
        }
        long seq = job.submittedAt.toEpochMilli() * 1000 + (job.id.hashCode() & 0x3ff);
        long since = job.requeuedAt != null ? job.requeuedAt.toEpochMilli() : job.submittedAt.toEpochMilli();
        return new QueuedJob(job.id, job.tenant, spec.priority(), seq, request, spec.runtimeEstimateSeconds(),
                job.submittedAt.toEpochMilli(), job.attainedGpuSeconds, since, yields(spec));
    }

    RunningJob runningJob(JobEntity job, JobSpec spec, List<AllocationEntity> allocs) {
        long start = job.runningSince != null ? job.runningSince.toEpochMilli() : System.currentTimeMillis();
        long estimate = spec.runtimeEstimateSeconds() > 0 ? spec.runtimeEstimateSeconds()
                : config.defaultRuntimeEstimate().toSeconds();
        long milli = 0;
        for (AllocationEntity a : allocs) {
            if (a.migProfile != null) {
                milli += 1000;
            } else if (a.milliGpu < 1000) {
                milli += a.milliGpu;
            } else {
                milli += 1000L * a.gpus().size();
            }
        }
        return new RunningJob(job.id, job.tenant, spec.priority(), milli, start, start + estimate * 1000,
                job.lastCheckpointAt == null ? start : job.lastCheckpointAt.toEpochMilli(),
                spec.priority() == PriorityClass.LOW, allocs.stream().map(a -> a.id).toList(), job.attainedGpuSeconds,
                yields(spec));
    }

    /**
     * Whether a job gives its GPUs to a less-served job of its class ({@code Las}): only one that saves
     * checkpoints, so that it resumes instead of starting over.
     */
    static boolean yields(JobSpec spec) {
        return spec.checkpoint().intervalSeconds() > 0;
    }

    /**
     * Where a job stands, from its row: the record replayed into memory, live after each commit and at a
     * takeover for every open job. {@code allocs} may hold any of its allocations; a placed job runs on its
     * current attempt's that hold GPUs. {@code spec} may be null only for an ended job.
     */
    JobRecord jobRecord(JobEntity job, JobSpec spec, List<AllocationEntity> allocs) {
        if (job.state.isFinal()) {
            return new JobRecord.Ended(job.id);
        }
        if (job.state == JobState.PENDING) {
            return new JobRecord.Queued(queued(job, spec));
        }
        if (job.state == JobState.WAITING_FOR_DEPENDENCIES) {
            return new JobRecord.Waiting(job.id, spec.after().stream().map(JobSpec.Dependency::jobId).toList());
        }
        List<AllocationEntity> held = allocs.stream().filter(a -> a.attempt == job.attempt && a.isActive()).toList();
        Stop stop = stopOf(job);
        if (stop == null && job.state == JobState.CHECKPOINTING) {
            // asked to checkpoint by a scheduler that did not store its requests yet: stop it once it has, or soon
            stop = new Stop("asked to checkpoint before the scheduler restarted", System.currentTimeMillis()
                    + config.preemptionGrace().toMillis(), null);
        }
        return new JobRecord.Placed(runningJob(job, spec, held), stop,
                TimeLimit.reachedAtMillis(rowOf(job, spec).run(), spec.timeLimitSeconds()));
    }

    /** An allocation's row as scheduler-core's rules take it. */
    static AllocationRow rowOf(AllocationEntity a) {
        return new AllocationRow(a.id, a.jobId, a.attempt, a.rank, a.nodeId, a.gpus(), a.migProfile, a.migStart,
                a.milliGpu, a.cpuMillis, a.memoryMib, a.createdAt, WorkerOutcome.Phase.valueOf(a.state), a.exitCode,
                a.migUuid, a.startedAt, a.endedAt);
    }

    static List<AllocationRow> rowsOf(List<AllocationEntity> allocs) {
        return allocs.stream().map(JobRows::rowOf).toList();
    }

    /** Writes what the rules made of an allocation's row back into its entity. */
    static void store(AllocationRow row, AllocationEntity a) {
        a.state = row.phase().name();
        a.exitCode = row.exitCode();
        a.migUuid = row.migUuid();
        a.startedAt = row.startedAt();
        a.endedAt = row.endedAt();
    }

    /** A new allocation's entity, from the row a placement made. */
    static AllocationEntity entityOf(AllocationRow row) {
        AllocationEntity a = new AllocationEntity();
        a.id = row.id();
        a.jobId = row.jobId();
        a.attempt = row.attempt();
        a.rank = row.rank();
        a.nodeId = row.nodeId();
        a.gpuIndices = AllocationEntity.encodeGpus(row.gpus());
        a.migProfile = row.migProfile();
        a.migStart = row.migStart();
        a.milliGpu = row.milliGpu();
        a.cpuMillis = row.cpuMillis();
        a.memoryMib = row.memoryMib();
        a.createdAt = row.createdAt();
        store(row, a);
        return a;
    }

    /** Whether an allocation holds its GPUs, from its row. */
    static AllocationRecord allocationRecord(AllocationEntity a, String tenant) {
        return rowOf(a).record(tenant);
    }

    /** The job's stop request, as its row holds it (null: none). */
    static Stop stopOf(JobEntity job) {
        return job.stopDeadline == null ? null
                : new Stop(job.stopReason, job.stopDeadline.toEpochMilli(), job.stopPreemptor, job.stopEnds);
    }

    static void setStop(JobEntity job, Stop stop) {
        job.stopReason = stop == null ? null : stop.reason();
        job.stopDeadline = stop == null ? null : Instant.ofEpochMilli(stop.deadlineMillis());
        job.stopPreemptor = stop == null ? null : stop.preemptor();
        job.stopEnds = stop != null && stop.ends();
    }

    /**
     * Where the jobs {@code ids} name stand, by id: a job id's one job, an array id's every element; ids the tenant
     * has no job or array of are missing. One query.
     */
    static Uni<Map<String, List<Dependencies.Standing>>> standing(Mutiny.Session session, String tenant,
            Collection<String> ids) {
        return session.createSelectionQuery("from JobEntity where tenant = :t and (id in :ids or arrayId in :ids)",
                        JobEntity.class)
                .setParameter("t", tenant).setParameter("ids", List.copyOf(ids)).getResultList()
                .map(jobs -> {
                    Map<String, List<Dependencies.Standing>> out = new HashMap<>();
                    for (JobEntity j : jobs) {
                        Dependencies.Standing s = new Dependencies.Standing(j.id, j.state, j.reason);
                        if (ids.contains(j.id)) {
                            out.computeIfAbsent(j.id, k -> new ArrayList<>()).add(s);
                        }
                        if (j.arrayId != null && ids.contains(j.arrayId)) {
                            out.computeIfAbsent(j.arrayId, k -> new ArrayList<>()).add(s);
                        }
                    }
                    return out;
                });
    }

    static JobView viewOf(JobEntity job, List<AllocationEntity> allocs) {
        return new JobView(job.id, job.tenant, job.clientRequestId, readableSpec(job), job.state, job.reason,
                job.state == JobState.PENDING || job.state == JobState.WAITING_FOR_DEPENDENCIES ? List.of()
                        : placementOf(allocs), job.submittedAt, job.updatedAt,
                job.resumeFrom, job.exitCode, job.arrayId, job.arrayIndex);
    }

    static List<WorkerPlacement> placementOf(List<AllocationEntity> allocs) {
        return allocs.stream().map(a -> new WorkerPlacement(a.rank, a.nodeId, a.gpus(), a.id, a.migInstance())).toList();
    }

    /** The job's spec, or null (logged) when its stored form cannot be read: the API still shows the job. */
    static JobSpec readableSpec(JobEntity job) {
        try {
            return specOf(job);
        } catch (RuntimeException e) {
            LOG.warnf("%s: its stored spec cannot be read (%s)", job.id, DatabaseFailures.clip(e));
            return null;
        }
    }

    static JobSpec specOf(JobEntity job) {
        String where = "jobs.spec_json of " + job.id;
        String opened;
        try {
            opened = seal.open(job.tenant, job.specJson);
        } catch (IllegalArgumentException e) {
            throw new dev.gpucloud.contracts.events.MalformedEventException(where + ": " + e.getMessage(), e);
        }
        return EventCodec.decode(where, JobSpec.class, opened.getBytes(StandardCharsets.UTF_8));
    }

    static String shape(JobSpec spec) {
        if (spec.gpusPerWorker() > 0) {
            return spec.gpusPerWorker() + " GPU(s)";
        }
        return spec.migProfile() != null ? "MIG " + spec.migProfile() : spec.milliGpu() + " milli-GPU";
    }
}
