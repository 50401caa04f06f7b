package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.rowOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;
import static dev.gpucloud.scheduler.service.engine.JobRows.store;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.scheduler.service.persistence.CheckpointEntity;
import dev.gpucloud.scheduler.service.persistence.CheckpointReportEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.state.AllocationRow;
import dev.gpucloud.scheduler.state.JobCommands;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.NodeCommands;
import dev.gpucloud.scheduler.state.WorkerCommands;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * What a host's agent saw happen to an allocation ({@code allocation.events}), applied in one operation's
 * transaction: a worker started, exited or was lost, saved a checkpoint, or got its START too late. The
 * rules are scheduler-core's ({@link WorkerCommands}, {@link JobCommands}); this reads and writes their rows.
 * Repeats are harmless, and news of an allocation that ended or was never made changes nothing.
 */
final class AllocationEvents {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final JobRows rows;
    private final Memory memory;

    AllocationEvents(JobRows rows, Memory memory) {
        this.rows = rows;
        this.memory = memory;
    }

    Uni<Void> apply(Work w, AllocationEvent event) {
        return switch (event.type()) {
            case STARTED -> started(w, event);
            case CHECKPOINT_SAVED -> checkpointSaved(w, event);
            case EXITED -> w.ended(event.allocationId(), false, event.exitCode(), event.detail());
            case LOST -> {
                if (event.startBy() != null) {
                    yield startAgain(w, event);
                }
                if (!event.heldBy().isEmpty()) { // its host refused its START: others hold its GPUs there
                    memory.fleet.assignment(event.allocationId()).ifPresent(a -> w.changes().busy.add(
                            new Changes.Busy(a, event.occurredAt().toEpochMilli(), event.heldBy())));
                }
                yield w.ended(event.allocationId(), true, null, event.detail());
            }
        };
    }

    private Uni<Void> started(Work w, AllocationEvent event) {
        return w.allocation(event.allocationId()).flatMap(a -> {
            if (a == null) {
                return Uni.createFrom().voidItem();
            }
            AllocationRow row = rowOf(a);
            WorkerCommands.Start started = WorkerCommands.started(row, event.occurredAt(), event.migInstanceUuid());
            if (started == WorkerCommands.Start.IGNORED) {
                return Uni.createFrom().voidItem();
            }
            Uni<JobEntity> replayed = w.job(a.jobId)
                    .invoke(job -> w.changes().allocation(row.record(job == null ? "" : job.tenant)));
            if (started == WorkerCommands.Start.REPEAT) {
                return replayed.replaceWithVoid();
            }
            store(row, a);
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, a.jobId, LogFields.NODE_ID, a.nodeId,
                    LogFields.ALLOCATION_ID, a.id)) {
                LOG.infof("%s worker %d started on %s%s", a.jobId, a.rank, a.nodeId, a.migUuid == null ? ""
                        : " (MIG " + a.migProfile + "@" + a.migStart + " = " + a.migUuid + ")");
            }
            return replayed.chain(() -> w.settle(a.jobId));
        });
    }

    /**
     * Its host got the START after its start-by time and did not start it. Should this scheduler still hold the
     * allocation (it could not hear the host meanwhile, or the START waited in the broker), it sends the START
     * again with a new start-by time, so a late command costs the job no attempt ({@link WorkerCommands#startAgain}).
     */
    private Uni<Void> startAgain(Work w, AllocationEvent event) {
        return w.allocation(event.allocationId()).flatMap(a -> a == null ? Uni.createFrom().voidItem()
                : w.job(a.jobId).flatMap(job -> {
                    if (job == null) {
                        return Uni.createFrom().voidItem();
                    }
                    AllocationRow worker = rowOf(a);
                    long now = System.currentTimeMillis();
                    Instant startBy = w.startBy(a.nodeId);
                    switch (WorkerCommands.startAgain(rows.rowOf(job, null), worker,
                            startBy == null ? null : startBy.toEpochMilli(), now)) {
                        case NO -> {
                            return Uni.createFrom().voidItem();
                        }
                        case TOO_LATE -> {
                            LOG.infof("%s came to %s after its start-by time; the host is silent since, so it is not"
                                    + " sent again", a.id, a.nodeId);
                            return Uni.createFrom().voidItem();
                        }
                        default -> {
                        }
                    }
                    JobSpec spec = readableSpec(job);
                    if (spec == null) {
                        return w.fail(job, Work.UNREADABLE);
                    }
                    return w.allocationsOf(job).flatMap(allocs -> {
                        AllocationRow rank0 = allocs.stream().filter(r -> r.rank == 0).findFirst().map(JobRows::rowOf)
                                .orElse(worker);
                        LOG.infof("%s came to %s after its start-by time %s, and this scheduler still holds it: sending"
                                + " its START again, to start by %s", a.id, a.nodeId, event.startBy(), startBy);
                        String master = NodeCommands.master(memory.fleet, rank0);
                        return w.command(NodeCommands.start(rows.rowOf(job, spec), spec, w.checkpointDir(job, spec),
                                worker, master, startBy, true, Instant.ofEpochMilli(now)));
                    });
                }));
    }

    /**
     * A worker saved a checkpoint. Each worker's report is stored once; the checkpoint counts for the job when
     * every worker of the current attempt reported the same path ({@link JobCommands#checkpointSaved}).
     */
    private Uni<Void> checkpointSaved(Work w, AllocationEvent event) {
        if (event.checkpointPath() == null || event.checkpointPath().isBlank()) {
            LOG.warnf("%s reported a checkpoint without a path; ignored", event.allocationId());
            return Uni.createFrom().voidItem();
        }
        var s = w.session();
        return w.job(event.jobId()).flatMap(job -> {
            if (job == null || job.state.isFinal()) {
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = readableSpec(job);
            if (spec == null) {
                return w.fail(job, Work.UNREADABLE);
            }
            return s.find(CheckpointReportEntity.class, new CheckpointReportEntity.Key(job.id, event.checkpointPath(),
                            event.allocationId()))
                    .flatMap(reported -> {
                        if (reported != null) {
                            return Uni.createFrom().voidItem();
                        }
                        CheckpointReportEntity r = new CheckpointReportEntity();
                        r.jobId = job.id;
                        r.path = event.checkpointPath();
                        r.allocationId = event.allocationId();
                        r.savedAt = event.occurredAt();
                        return s.persist(r).call(s::flush);
                    })
                    .chain(() -> s.createSelectionQuery("select count(r) from CheckpointReportEntity r"
                                    + " where r.jobId = :job and r.path = :path and r.allocationId in"
                                    + " (select a.id from AllocationEntity a"
                                    + " where a.jobId = :job and a.attempt = :attempt)",
                                    Long.class)
                            .setParameter("job", job.id).setParameter("path", event.checkpointPath())
                            .setParameter("attempt", job.attempt).getSingleResult())
                    .flatMap(workersSaved -> {
                        if (workersSaved < spec.workers()) {
                            LOG.infof("%s: %d of %d workers saved the checkpoint at %s", job.id, workersSaved,
                                    spec.workers(), event.checkpointPath());
                            return Uni.createFrom().voidItem();
                        }
                        return checkpointComplete(w, job, spec, event, workersSaved.intValue());
                    });
        });
    }

    private Uni<Void> checkpointComplete(Work w, JobEntity job, JobSpec spec, AllocationEvent event,
            int workersSaved) {
        var s = w.session();
        CheckpointEntity.Key key = new CheckpointEntity.Key();
        key.jobId = job.id;
        key.path = event.checkpointPath();
        return s.find(CheckpointEntity.class, key).flatMap(seen -> {
            Uni<Void> record = Uni.createFrom().voidItem();
            if (seen == null) {
                CheckpointEntity c = new CheckpointEntity();
                c.jobId = job.id;
                c.path = event.checkpointPath();
                c.allocationId = event.allocationId();
                c.savedAt = event.occurredAt();
                record = s.persist(c);
            }
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant)) {
                LOG.infof("%s saved a checkpoint at %s%s", job.id, event.checkpointPath(),
                        spec.workers() > 1 ? " (all " + spec.workers() + " workers)" : "");
            }
            return record.call(() -> w.activeAllocations(job).flatMap(active -> {
                JobRow row = rows.rowOf(job, spec);
                return w.carryOut(job, spec, row, JobCommands.checkpointSaved(row, event.checkpointPath(),
                        event.occurredAt().toEpochMilli(), workersSaved, System.currentTimeMillis()), active);
            }));
        });
    }
}
