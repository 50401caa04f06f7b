package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.liveness.AllocationReconciler;
import dev.gpucloud.scheduler.liveness.HostLiveness;
import dev.gpucloud.scheduler.queue.PassResult;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import dev.gpucloud.scheduler.queue.SchedulingPass;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.state.JobCommands;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.NodeCommands;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * One turn of the scheduler, on the leader: reconcile what hosts say they run with what it holds, lose
 * what hosts silent past the timeout held, stop jobs whose checkpoint deadline passed (one transaction for
 * all of that), then run scheduler-core's {@link SchedulingPass} over the queue and store what it decided:
 * placements, jobs that can never fit, preemptions, and why the rest wait.
 */
final class SchedulingTurn {

    /** How often a queued job's changed reason is stored, at most, once it has one from a pass. */
    static final long REASONS_REFRESH_MILLIS = 2_000;

    /** How a pass's reasons begin ({@link JobCommands#pendingReason}); a submission's do not. */
    private static final String PASS_REASON = JobCommands.pendingReason("", null).strip();

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final Transactions txs;
    private final Memory memory;
    private final SchedulingPass pass;
    private final JobRows rows;
    private final SchedulerConfig config;
    private final AllocationEvents allocationEvents;
    /** Whether the last turn placed through deafness, so its start and end are each logged once. */
    private boolean bridging;
    /** When the last sweep of the fleet ran ({@link #sweepDue}), 0 before the first; written in turns only. */
    private volatile long lastSweepMillis;

    SchedulingTurn(Transactions txs, Memory memory, SchedulingPass pass, JobRows rows, SchedulerConfig config,
            AllocationEvents allocationEvents) {
        this.txs = txs;
        this.memory = memory;
        this.pass = pass;
        this.rows = rows;
        this.config = config;
        this.allocationEvents = allocationEvents;
    }

    /**
     * One scheduling pass: lost hosts and overdue checkpoints first (when a sweep is due), then the queue.
     * What the pass reserved is persisted in one transaction (allocations, START and CHECKPOINT commands,
     * events, reasons); if that fails, the reservations are undone and the jobs go back in line.
     */
    Uni<Void> run() {
        memory.takeInWhatHostsSaid();
        long now = System.currentTimeMillis();
        if (!sweepDue(now)) {
            return runPass(now);
        }
        lastSweepMillis = now;
        bridgeDeafness(now);
        AllocationReconciler.Plan plan = reconcile(now);
        Map<String, String> lost = lostForSilence(now);
        List<String> overdue = memory.state.overdue(now);
        if (plan.asks().isEmpty() && plan.running().isEmpty() && lost.isEmpty() && overdue.isEmpty()) {
            return runPass(now);
        }
        Changes sweep = new Changes();
        return txs.tx(sweep, w -> askHosts(w, plan, now)
                        .call(() -> Transactions.inTurn(lost.entrySet(), e -> w.lose(e.getKey(), e.getValue())))
                        .call(() -> Transactions.inTurn(overdue, jobId -> stopOverdue(w, jobId, now))))
                .invoke(() -> txs.committed(sweep))
                .chain(() -> runPass(now));
    }

    /**
     * Whether this turn sweeps the fleet: every {@code sweep-interval}. A sweep visits every host and every
     * host's report, so it does not run on each of the hundreds of passes a second a busy scheduler makes;
     * what it looks for (silence, reports that disagree, checkpoint deadlines) is measured in tens of seconds.
     */
    boolean sweepDue(long nowMillis) {
        return nowMillis - lastSweepMillis >= config.sweepInterval().toMillis();
    }

    /**
     * Most hosts silent past {@code host-timeout} at once is this scheduler not hearing them (the broker is down or
     * just back), not hosts gone: they count as heard now for placement ({@link HostLiveness#bridgeDeafness}),
     * so work is placed on and the moment hearing resumes, not host by host as samples come through.
     */
    private void bridgeDeafness(long now) {
        boolean bridged = memory.liveness.bridgeDeafness(memory.fleet, now, config.hostTimeout().toMillis());
        if (bridged != bridging) {
            bridging = bridged;
            if (bridged) {
                LOG.warnf("most hosts have been silent for over %d s at once: taking it for this scheduler not hearing"
                        + " them, and placing as if they were heard now", config.hostTimeout().toSeconds());
            } else {
                LOG.info("hosts are heard again: each host's own last word decides whether it takes work");
            }
        }
    }

    /**
     * Holds the GPUs of allocations that agents run and this scheduler does not, and gives them back once the
     * agents stop reporting them; returns the rest of the reconciler's plan, for {@link #askHosts}.
     */
    private AllocationReconciler.Plan reconcile(long now) {
        AllocationReconciler.Plan plan = memory.reconciler.reconcile(memory.fleet, memory.state::started, now,
                config.hostTimeout().toMillis());
        for (Assignment hold : plan.hold()) {
            memory.fleet.reserve(hold);
            LOG.warnf("host %s runs %s (job %s of %s) on GPUs %s, which this scheduler does not run: holding them",
                    hold.nodeId(), hold.allocationId(), hold.jobId(), hold.tenant(), hold.gpuIndices());
        }
        for (String id : plan.release()) {
            memory.fleet.unreserve(id).ifPresent(a -> LOG.infof("host %s no longer runs %s: its GPUs %s are free again",
                    a.nodeId(), id, a.gpuIndices()));
        }
        plan.conflicts().forEach(c -> LOG.errorf("GPU held twice: %s", c));
        return plan;
    }

    /**
     * Sends what the reconciler asks: a STOP for an allocation that is not the scheduler's, a STATUS for one of
     * its own that its host no longer reports (the agent answers with its STARTED, EXITED or LOST). An
     * allocation its host reports running counts as started, should its STARTED event have been missed.
     */
    private Uni<Void> askHosts(Work w, AllocationReconciler.Plan plan, long now) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (AllocationReconciler.Ask ask : plan.asks()) {
            LOG.warnf("%s %s on %s: %s", ask.unknown() ? "stopping" : "asking about", ask.allocationId(), ask.nodeId(),
                    ask.reason());
            chain = chain.call(() -> w.command(NodeCommands.ask(ask, now)));
        }
        for (AllocationReport r : plan.running()) {
            Assignment a = memory.fleet.assignment(r.allocationId()).orElse(null);
            if (a == null) {
                continue;
            }
            AllocationEvent start = new AllocationEvent(r.allocationId(), a.jobId(), a.nodeId(),
                    AllocationEventType.STARTED, Instant.ofEpochMilli(now), null, null, "reported running by its host",
                    r.migInstanceUuid());
            chain = chain.call(() -> allocationEvents.apply(w, start));
        }
        return chain;
    }

    /** The allocations lost for their hosts' silence ({@link HostLiveness}), each with the reason. */
    private Map<String, String> lostForSilence(long now) {
        boolean wasDeaf = memory.liveness.deaf();
        Map<String, String> lost = memory.liveness.lost(memory.fleet, now, memory.reconciler.foreignHolds());
        if (memory.liveness.deaf() != wasDeaf) {
            if (memory.liveness.deaf()) {
                LOG.warnf("most hosts are silent at once: taking it for this scheduler not hearing them (the broker or"
                        + " the network to it), not for hosts lost; nothing is lost for silence until hosts are heard"
                        + " again");
            } else {
                LOG.infof("hosts are heard again; a host's silence counts from %s",
                        Instant.ofEpochMilli(memory.liveness.listeningSinceMillis()));
            }
        }
        return lost;
    }

    /** A job asked to checkpoint and stop reached its deadline ({@link JobCommands#stopOverdue}). */
    private Uni<Void> stopOverdue(Work w, String jobId, long now) {
        return w.job(jobId).flatMap(job -> {
            if (job == null) {
                w.changes().job(new JobRecord.Ended(jobId));
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = readableSpec(job);
            if (spec == null && !job.state.isFinal()) {
                return w.fail(job, Work.UNREADABLE);
            }
            return w.activeAllocations(job).flatMap(active -> {
                JobRow row = rows.rowOf(job, spec);
                return w.carryOut(job, spec, row, JobCommands.stopOverdue(row, now), active);
            });
        });
    }

    private Uni<Void> runPass(long now) {
        if (memory.state.queue().size() == 0) {
            return Uni.createFrom().voidItem();
        }
        PassResult result = pass.run(memory.fleet, memory.state.queue(), memory.state.running(),
                memory.state.preempting(), memory.state.stopping(), now);
        Changes changes = new Changes();
        Set<String> ids = new HashSet<>();
        result.placed().forEach(p -> ids.add(p.job().jobId()));
        ids.addAll(result.unresolvable().keySet());
        result.preemptions().forEach(p -> p.victims().forEach(v -> ids.add(v.jobId())));
        Uni<Void> persisted = txs.tx(changes, w -> {
            Uni<Map<String, JobEntity>> load = ids.isEmpty() ? Uni.createFrom().item(Map.of())
                    : w.session().createSelectionQuery("from JobEntity where id in :ids", JobEntity.class)
                            .setParameter("ids", List.copyOf(ids)).getResultList()
                            .map(list -> {
                                Map<String, JobEntity> m = new HashMap<>();
                                list.forEach(j -> m.put(j.id, j));
                                return m;
                            });
            return load.flatMap(jobs -> {
                Uni<Void> chain = Uni.createFrom().voidItem();
                for (PassResult.Placed p : result.placed()) {
                    JobEntity job = jobs.get(p.job().jobId());
                    chain = chain.call(() -> w.bind(job, p));
                }
                for (var e : result.unresolvable().entrySet()) {
                    chain = chain.call(() -> w.fail(jobs.get(e.getKey()), "unschedulable: " + e.getValue()));
                }
                for (PassResult.Preemption p : result.preemptions()) {
                    for (RunningJob victim : p.victims()) {
                        JobEntity job = jobs.get(victim.jobId());
                        String why = victim.priority() == p.preemptor().priority()
                                ? "yields to " + p.preemptor().jobId() + " of its class, which has received less GPU"
                                        + " service (" + Math.round(victim.attainedAt(now)) + " GPU-s here)"
                                : "preempted by " + p.preemptor().jobId() + " (" + p.preemptor().priority() + ")";
                        chain = chain.call(() -> w.askToCheckpoint(job, now + config.preemptionGrace().toMillis(), why,
                                p.preemptor().jobId()));
                    }
                }
                // A reason names the fleet ("127 hosts: ..."), so every host that joins changes the reason of every
                // job it does not fit: a job's first reason from a pass is written at once, a change to it at most
                // every REASONS_REFRESH_MILLIS (a pass runs at least every reschedule interval, which writes it).
                boolean refresh = now - memory.reasonsWrittenAt >= REASONS_REFRESH_MILLIS;
                Map<String, String> reasons = new LinkedHashMap<>();
                for (var e : result.waiting().entrySet()) {
                    String reason = JobCommands.pendingReason(e.getValue(), memory.requeueNotes.get(e.getKey()));
                    String last = memory.lastReason.get(e.getKey());
                    if (!reason.equals(last) && (refresh || last == null || !last.startsWith(PASS_REASON))) {
                        reasons.put(e.getKey(), reason);
                    }
                }
                if (refresh) {
                    memory.reasonsWrittenAt = now;
                }
                changes.reasons.putAll(reasons);
                return chain.call(() -> PendingReasons.write(w.session(), reasons, Instant.ofEpochMilli(now)));
            });
        });
        return persisted
                .invoke(() -> txs.committed(changes))
                .onFailure().recoverWithUni(f -> {
                    if (Transactions.notNow(f) || result.placed().size() + result.unresolvable().size() == 0) {
                        for (PassResult.Placed p : result.placed()) {
                            p.decision().assignments().forEach(a -> memory.fleet.unreserve(a.allocationId()));
                            memory.state.queue().enqueue(p.job());
                        }
                        return Uni.createFrom().failure(f);
                    }
                    LOG.warnf("a scheduling pass could not be stored (%s); storing its %d placed and %d"
                            + " unresolvable job(s)"
                            + " one at a time", DatabaseFailures.clip(f), result.placed().size(),
                            result.unresolvable().size());
                    return persistOneByOne(result, now);
                });
    }

    /**
     * Stores a pass's outcome job by job, after the pass as a whole was refused: a job whose own outcome
     * cannot be stored (its row is unreadable, the database refuses a value) is FAILED with the reason and
     * leaves the queue, and every other job's placement stands. A pass thus never fails again and again
     * for one job. What the pass decided about waiting and preempting is decided afresh by the next one.
     */
    private Uni<Void> persistOneByOne(PassResult result, long now) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (PassResult.Placed p : result.placed()) {
            String jobId = p.job().jobId();
            chain = chain.call(() -> alone(jobId, (w, job) -> w.bind(job, p), () -> {
                p.decision().assignments().forEach(a -> memory.fleet.unreserve(a.allocationId()));
                return p.job();
            }));
        }
        for (var e : result.unresolvable().entrySet()) {
            chain = chain.call(() -> alone(e.getKey(), (w, job) -> w.fail(job, "unschedulable: " + e.getValue()),
                    () -> null));
        }
        return chain;
    }

    /** What to do with one job inside its own transaction. */
    @FunctionalInterface
    private interface JobStep {
        Uni<Void> apply(Work w, JobEntity job);
    }

    /**
     * Runs {@code step} for one job in a transaction of its own. On failure {@code undo} gives back what the
     * pass reserved and returns the queue entry to put back (or null); a transient failure puts it back, any
     * other fails the job.
     */
    private Uni<Void> alone(String jobId, JobStep step, Supplier<QueuedJob> undo) {
        Changes c = new Changes();
        return txs.tx(c, w -> w.job(jobId)
                        .flatMap(job -> job == null ? Uni.createFrom().voidItem() : step.apply(w, job)))
                .invoke(() -> txs.committed(c))
                .onFailure().recoverWithUni(f -> {
                    QueuedJob back = undo.get();
                    if (Transactions.notNow(f)) {
                        if (back != null) {
                            memory.state.queue().enqueue(back);
                        }
                        return Uni.createFrom().voidItem();
                    }
                    return failJob(jobId, "could not be scheduled: " + DatabaseFailures.clip(f), back);
                });
    }

    /**
     * Ends a job the scheduler cannot go on with, without reading its spec (which may be what is wrong):
     * FAILED with the reason, out of the queue. Should even that be refused, the job leaves the queue in
     * memory so that no pass trips over it again; it is retried at the next start.
     */
    Uni<Void> failJob(String jobId, String reason, QueuedJob queued) {
        String why = DatabaseFailures.printable(reason);
        try (LogFields fields = LogFields.of(LogFields.JOB_ID, jobId)) {
            LOG.errorf("%s FAILED: %s", jobId, why);
        }
        Changes c = new Changes();
        return txs.tx(c, w -> w.job(jobId).flatMap(job -> w.fail(job, why)))
                .invoke(() -> txs.committed(c))
                .onFailure().recoverWithItem(f -> {
                    if (queued != null && Transactions.notNow(f)) {
                        // the database went away meanwhile: the job is not at fault yet; it waits for the next pass
                        LOG.warnf("could not fail %s now (%s); it stays queued", jobId, DatabaseFailures.clip(f));
                        memory.state.queue().enqueue(queued);
                        return null;
                    }
                    LOG.errorf("could not even fail %s (%s); it leaves the queue until the scheduler restarts", jobId,
                            DatabaseFailures.clip(f));
                    // in memory only: the row is retried at the next start
                    memory.state.replay(new JobRecord.Ended(jobId));
                    return null;
                });
    }
}
