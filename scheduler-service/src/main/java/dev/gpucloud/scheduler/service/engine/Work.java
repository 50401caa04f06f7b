package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.placementOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;
import static dev.gpucloud.scheduler.service.engine.JobRows.rowOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.rowsOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.specOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.store;
import static dev.gpucloud.scheduler.service.engine.JobRows.viewOf;

import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.lifecycle.GangSettlement;
import dev.gpucloud.scheduler.queue.PassResult;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.service.persistence.OutboxEntity;
import dev.gpucloud.scheduler.state.AllocationRow;
import dev.gpucloud.scheduler.state.JobCommands;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.NodeCommands;
import dev.gpucloud.scheduler.state.WorkerCommands;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * One operation's transaction, as the engine runs it: reads the rows a rule needs, hands them to
 * scheduler-core's rules ({@link JobCommands}, {@link WorkerCommands}), and carries out what they decided:
 * stores the rows, adds the node commands and job events to the outbox, and notes the records to replay
 * ({@link Changes}) once the transaction commits. Every command it writes carries the epoch the
 * transaction passed the fence with. Lives for one transaction; owned by the engine's serial executor.
 */
final class Work {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    /**
     * What every transaction shares: the outbox, the row mapping, memory, the settings, and the hosts' agents that
     * STARTs' secrets are sealed for.
     */
    record Tools(Outbox outbox, JobRows rows, Memory memory, SchedulerConfig config, HostAgents agents, Tracer tracer) {
    }

    private final Tools tools;
    private final Mutiny.Session session;
    private final Changes changes;
    private final long epoch;
    /** A batch's jobs and all their allocations, loaded up front ({@link #preload}); null otherwise. */
    private Map<String, List<AllocationEntity>> preloaded;

    Work(Tools tools, Mutiny.Session session, Changes changes, long epoch) {
        this.tools = tools;
        this.session = session;
        this.changes = changes;
        this.epoch = epoch;
    }

    Mutiny.Session session() {
        return session;
    }

    Changes changes() {
        return changes;
    }

    // ---------------------------------------------------------------- reads

    Uni<JobEntity> job(String jobId) {
        return session.find(JobEntity.class, jobId);
    }

    Uni<AllocationEntity> allocation(String allocationId) {
        return session.find(AllocationEntity.class, allocationId);
    }

    /** The job's current attempt's allocations, in rank order. */
    Uni<List<AllocationEntity>> allocationsOf(JobEntity job) {
        Map<String, List<AllocationEntity>> batch = preloaded;
        if (batch != null && batch.containsKey(job.id)) {
            return Uni.createFrom().item(batch.get(job.id).stream().filter(a -> a.attempt == job.attempt).toList());
        }
        return session.createSelectionQuery("from AllocationEntity where jobId = :j and attempt = :a order by rank",
                        AllocationEntity.class)
                .setParameter("j", job.id).setParameter("a", job.attempt).getResultList();
    }

    Uni<List<AllocationEntity>> activeAllocations(JobEntity job) {
        return allocationsOf(job).map(all -> all.stream().filter(AllocationEntity::isActive).toList());
    }

    Uni<JobView> view(JobEntity job) {
        return allocationsOf(job).map(allocs -> viewOf(job, allocs));
    }

    /**
     * Loads, in two queries, every job of {@code jobIds} and all their allocations, into the session (so each
     * lookup of a batch is answered from it, not by a round trip each) and for {@link #allocationsOf}.
     */
    Uni<Void> preload(List<String> jobIds) {
        return session.createSelectionQuery("from JobEntity where id in :ids", JobEntity.class)
                .setParameter("ids", jobIds).getResultList()
                .chain(jobs -> session.createSelectionQuery("from AllocationEntity where jobId in :ids",
                                AllocationEntity.class)
                        .setParameter("ids", jobIds).getResultList())
                .invoke(allocs -> {
                    Map<String, List<AllocationEntity>> byJob = new HashMap<>();
                    jobIds.forEach(id -> byJob.put(id, new ArrayList<>()));
                    allocs.forEach(a -> byJob.get(a.jobId).add(a));
                    byJob.values().forEach(list -> list.sort(Comparator.comparingInt(a -> a.rank)));
                    preloaded = byJob;
                })
                .replaceWithVoid();
    }

    // ---------------------------------------------------------------- writes

    /**
     * Adds a node command to the transaction, stamped with the epoch it is written under. Every command reaches the
     * outbox here, so here a START's secret values are sealed for its host's agent ({@link HostAgents}): neither
     * the outbox row nor the record on node.commands holds them in the clear where an enrolment key is configured.
     */
    Uni<Void> command(NodeCommand command) {
        return command(command, null);
    }

    /** As {@link #command(NodeCommand)}, published in the trace {@code traceparent} names (null: in none). */
    Uni<Void> command(NodeCommand command, String traceparent) {
        return tools.outbox().add(session, Topics.NODE_COMMANDS, command.nodeId(),
                tools.agents().sealed(command.withEpoch(epoch)), traceparent);
    }

    /**
     * Carries out what a rule decided for a job: stores its row, sends its workers (those of {@code allocs}
     * that hold GPUs) STOP or CHECKPOINT, and publishes its event or only replays its record. {@code spec} may
     * be null only for a job that has ended.
     */
    Uni<Void> carryOut(JobEntity job, JobSpec spec, JobRow row, JobCommands.Outcome outcome,
            List<AllocationEntity> allocs) {
        if (!outcome.changed()) {
            return Uni.createFrom().voidItem();
        }
        store(row, job);
        if (outcome.note() != null) {
            changes.notes.put(job.id, outcome.note());
        }
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (NodeCommand c : NodeCommands.toWorkers(row, outcome.checkpointBy() > 0 ? checkpointDir(job, spec) : null,
                outcome, rowsOf(allocs), Instant.now())) {
            chain = chain.call(() -> command(c, job.traceparent));
        }
        if (outcome.effect() == JobCommands.Effect.STORE) {
            return chain.invoke(() -> changes.job(tools.rows().jobRecord(job, spec, allocs)));
        }
        LOG.infof("%s of tenant %s is %s: %s", job.id, job.tenant, job.state, job.reason);
        return chain.call(() -> announce(job, spec, job.state == JobState.PENDING ? List.of() : allocs));
    }

    /**
     * A job's row changed: its event goes to the outbox, and its record (where it stands now) to the
     * operation's changes. {@code allocs} are its current attempt's allocations (those that hold GPUs are
     * named in the event); {@code spec} may be null only for an ended job.
     */
    Uni<Void> announce(JobEntity job, JobSpec spec, List<AllocationEntity> allocs) {
        return announce(job, spec, allocs, job.traceparent);
    }

    private Uni<Void> announce(JobEntity job, JobSpec spec, List<AllocationEntity> allocs, String traceparent) {
        return session.persist(announcement(job, spec, allocs, traceparent));
    }

    /**
     * Stores new jobs and announces them: one {@code persistAll} for every row, however many. A chain of one
     * persist per row, thousands deep for a large array, held the transaction open past the database's idle limit.
     */
    Uni<Void> create(List<JobEntity> jobs, List<JobSpec> specs) {
        List<Object> rows = new ArrayList<>(jobs.size() * 2);
        for (int i = 0; i < jobs.size(); i++) {
            rows.add(jobs.get(i));
            rows.add(announcement(jobs.get(i), specs.get(i), List.of(), jobs.get(i).traceparent));
        }
        return rows.isEmpty() ? Uni.createFrom().voidItem() : session.persistAll(rows.toArray());
    }

    /** The job's event, counted among this transaction's changes; its outbox row is the caller's to persist. */
    private OutboxEntity announcement(JobEntity job, JobSpec spec, List<AllocationEntity> allocs, String traceparent) {
        changes.job(tools.rows().jobRecord(job, spec, allocs));
        JobEvent event = new JobEvent(job.id, job.tenant, job.state, job.reason, job.updatedAt, placementOf(allocs),
                job.resumeFrom);
        changes.events.add(event);
        return tools.outbox().row(Topics.JOB_EVENTS, job.id, event, traceparent);
    }

    /** What a placed job whose stored spec cannot be read becomes: FAILED, so it holds up nobody's work. */
    static final String UNREADABLE = "its stored spec cannot be read";

    /**
     * Moves a placed job on from its current attempt's allocations ({@link JobCommands#settle}). A job already
     * requeued or ended ignores its old workers' news; one whose spec cannot be read is failed.
     */
    Uni<Void> settle(String jobId) {
        return job(jobId).flatMap(job -> allocationsOf(job).flatMap(allocs -> {
            if (!GangSettlement.placed(job.state)) {
                return Uni.createFrom().voidItem(); // its spec need not be read (an ended job's may be unreadable)
            }
            JobSpec spec = readableSpec(job);
            if (spec == null) {
                return fail(job, UNREADABLE);
            }
            JobRow row = tools.rows().rowOf(job, spec);
            return carryOut(job, spec, row, JobCommands.settle(row,
                    rowsOf(allocs).stream().map(AllocationRow::outcome).toList(), System.currentTimeMillis()), allocs);
        }));
    }

    /** A worker exited with {@code exitCode}, or was lost ({@code lost}): its GPUs are free, and its job moves on. */
    Uni<Void> ended(String allocationId, boolean lost, Integer exitCode, String detail) {
        return allocation(allocationId).flatMap(a -> {
            AllocationRow row = a == null ? null : rowOf(a);
            if (row == null || !WorkerCommands.ended(row, lost, exitCode, Instant.now())) {
                return Uni.createFrom().voidItem();
            }
            store(row, a);
            changes.allocation(row.record(""));
            LOG.infof("%s worker %d on %s %s%s", a.jobId, a.rank, a.nodeId, lost ? "was lost" : "exited " + exitCode,
                    detail == null || detail.isBlank() ? "" : " (" + detail + ")");
            return settle(a.jobId);
        });
    }

    /**
     * Loses an allocation on this scheduler's own evidence (its host silent past the timeout, a lost heartbeat,
     * the host gone or its GPUs changed). Its host is told to stop it: should the host still run it, or get its
     * START late, it does not keep GPUs that the scheduler now counts free. The STOP follows the START on the
     * host's partition of node.commands, so a late START is undone, never left running.
     */
    Uni<Void> lose(String allocationId, String why) {
        return allocation(allocationId).flatMap(a -> {
            if (a == null || !a.isActive()) {
                return Uni.createFrom().voidItem();
            }
            return job(a.jobId)
                    .call(job -> command(NodeCommands.stop(rowOf(a), job == null ? "" : job.tenant, why,
                            Instant.now()), job == null ? null : job.traceparent))
                    .chain(() -> ended(allocationId, true, null, why));
        });
    }

    /**
     * Asks a placed job to checkpoint by the deadline and then stop ({@link JobCommands#askToCheckpoint}); it
     * is stopped and requeued once it reports the checkpoint, or at the deadline.
     */
    Uni<Void> askToCheckpoint(JobEntity job, long deadlineMillis, String why, String preemptor) {
        if (!GangSettlement.placed(job.state)) {
            return Uni.createFrom().voidItem();
        }
        JobSpec spec = readableSpec(job);
        if (spec == null) {
            return fail(job, UNREADABLE);
        }
        return activeAllocations(job).flatMap(active -> {
            JobRow row = tools.rows().rowOf(job, spec);
            return carryOut(job, spec, row, JobCommands.askToCheckpoint(row, deadlineMillis, why, preemptor,
                    System.currentTimeMillis()), active);
        });
    }

    /**
     * The placed job reached its time limit ({@link JobCommands#timeLimitReached}): asked for a last checkpoint by
     * the deadline, then ended FAILED, or failed at once when it saves none or has not started.
     */
    Uni<Void> reachTimeLimit(String jobId, long deadlineMillis, long nowMillis) {
        return job(jobId).flatMap(job -> {
            if (job == null) {
                changes.job(new dev.gpucloud.scheduler.state.SchedulerState.JobRecord.Ended(jobId));
                return Uni.createFrom().voidItem();
            }
            if (!GangSettlement.placed(job.state)) {
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = readableSpec(job);
            if (spec == null) {
                return fail(job, UNREADABLE);
            }
            return activeAllocations(job).flatMap(active -> {
                JobRow row = tools.rows().rowOf(job, spec);
                return carryOut(job, spec, row, JobCommands.timeLimitReached(row, spec.timeLimitSeconds(),
                        spec.checkpoint().intervalSeconds() > 0, deadlineMillis, nowMillis), active);
            });
        });
    }

    /**
     * Ends a job the scheduler cannot go on with ({@link JobCommands#fail}): FAILED with {@code why}, its workers
     * stopped. Its spec is read if it can be, not needed: an unreadable spec may be what is wrong.
     */
    Uni<Void> fail(JobEntity job, String why) {
        if (job == null || job.state.isFinal()) {
            return Uni.createFrom().voidItem();
        }
        JobSpec spec = readableSpec(job);
        return activeAllocations(job).flatMap(active -> {
            JobRow row = tools.rows().rowOf(job, spec);
            return carryOut(job, spec, row, JobCommands.fail(row, why, System.currentTimeMillis()), active);
        });
    }

    /**
     * Persists one placed job: its allocations, START commands and its SCHEDULED event, all in a "place job" span
     * of the job's trace, which its STARTs and event are published under.
     */
    Uni<Void> bind(JobEntity job, PassResult.Placed placed) {
        JobSpec spec = specOf(job);
        JobRow row = tools.rows().rowOf(job, spec);
        Instant now = Instant.now();
        List<Assignment> assignments = placed.decision().assignments();
        List<AllocationRow> workers = WorkerCommands.placed(row, assignments, placed.backfilled(), now);
        store(row, job);
        job.capacity = placed.job().request().capacity() == spec.capacity() ? null : placed.job().request().capacity();
        workers.forEach(w -> changes.allocation(w.record(job.tenant)));
        Span span = Spans.child(tools.tracer(), "place job", Traceparent.parent(job.traceparent), SpanKind.INTERNAL,
                LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant,
                LogFields.NODE_ID, String.join(",", workers.stream().map(AllocationRow::nodeId).distinct().toList()));
        span.setAttribute("attempt", job.attempt);
        span.setAttribute("workers", workers.size());
        span.setAttribute("backfilled", placed.backfilled());
        String traceparent = Traceparent.of(span);
        try (LogFields fields = LogFields.of(LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant,
                LogFields.TRACE_ID, Spans.traceId(span))) {
            LOG.infof("placed %s of tenant %s (attempt %d): %s", job.id, job.tenant, job.attempt,
                    WorkerCommands.where(assignments));
        }
        List<AllocationEntity> entities = workers.stream().map(JobRows::entityOf).toList();
        String master = NodeCommands.master(tools.memory().fleet, workers.get(0));
        Uni<Void> chain = session.persistAll(entities.toArray());
        for (AllocationRow w : workers) {
            NodeCommand start = NodeCommands.start(row, spec, checkpointDir(job, spec), w, master, startBy(w.nodeId()),
                    false, now);
            chain = chain.call(() -> command(start, traceparent));
        }
        return chain.call(() -> announce(job, spec, entities, traceparent))
                .onItemOrFailure().invoke((ignored, failure) -> Spans.end(span, failure));
    }

    String checkpointDir(JobEntity job, JobSpec spec) {
        return NodeCommands.checkpointDir(job.id, spec, tools.config().defaultCheckpointRoot());
    }

    /**
     * The time by which a host must start what it is sent now, or not at all ({@code StartDeadline}): after it
     * this scheduler may have counted the allocation lost. Null for a host it does not know.
     */
    Instant startBy(String nodeId) {
        Memory m = tools.memory();
        return m.fleet.node(nodeId).map(n -> Instant.ofEpochMilli(m.liveness.startByMillis(n))).orElse(null);
    }
}
