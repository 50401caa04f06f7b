package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.state.Dependencies;
import dev.gpucloud.scheduler.state.JobArrays;
import dev.gpucloud.scheduler.state.JobCommands;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.NodeEvents;
import dev.gpucloud.scheduler.queue.SchedulingPass;
import dev.gpucloud.scheduler.state.SchedulerState;
import dev.gpucloud.scheduler.service.config.EnrolmentKey;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import dev.gpucloud.scheduler.service.persistence.HostCordonEntity;
import dev.gpucloud.scheduler.spot.SpotPolicy;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * Drives jobs through their lives. The cluster model ({@link Fleet}), the queue and the running
 * jobs live in memory, owned by the {@link SerialExecutor}: every operation runs alone, as one
 * database transaction, and touches memory only after its transaction commits (or undoes what the
 * scheduling pass reserved when it fails). PostgreSQL holds the truth: at start the queue, running
 * jobs and held GPUs are rebuilt from it. Records leave through the transactional {@link Outbox}.
 *
 * <p>Placement is scheduler-core's {@link PlacementFramework} driven by its {@link SchedulingPass}
 * (priority classes, fair share, quotas, EASY backfill, preemption); each job's state moves through
 * scheduler-core's {@link JobRun}. Involuntary stops (preemption, spot notice, rebalance, lost host
 * or worker) requeue the job to resume from its latest checkpoint; a preemption or spot notice first
 * asks the job to checkpoint (CHECKPOINT with a deadline) and stops it once it has, or at the deadline.
 */
@ApplicationScoped
public class SchedulerEngine {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);
    /** How soon a pass that failed on the database is tried again. */
    private static final long PASS_RETRY_MILLIS = 1000;

    private final SerialExecutor serial;
    private final JobWatchers watchers;
    private final SchedulerConfig config;
    private final LeaderState leader;
    /** The stack's enrolment key, for the start-up note; null inside where none is configured. */
    private final EnrolmentKey enrolment;
    private volatile Vertx vertx;
    /** The fleet, the queue, the running jobs and held GPUs: changed only by replaying committed rows. */
    private final Memory memory;
    /** How operations and their transactions run. */
    private final Transactions txs;
    /** What hosts report of their allocations, applied in a transaction. */
    private final AllocationEvents allocationEvents;
    /** SubmitJob, group-committed. */
    private final Submissions submissions;
    /** Reconciliation, lost hosts, overdue checkpoints and the scheduling pass. */
    private final SchedulingTurn turn;
    private final SpotPolicy spot;
    /** What node events do: durations from the configuration. */
    private final NodeEvents.Settings nodeRules;
    /** Rows to scheduler-core's records and back. */
    private final JobRows rows;
    /** What a takeover and a following standby read back. */
    private final StateReads reads;
    /** Placed jobs past their time limit. */
    private final TimeLimitSweep timeLimits;
    /** When the last scheduling pass completed, and how many jobs waited then: what readiness reports. */
    private volatile long lastPassCompletedMillis = System.currentTimeMillis();
    private volatile int pendingJobs;
    private volatile String lastPassFailure;
    private final AtomicBoolean passQueued = new AtomicBoolean();
    private final AtomicBoolean dependentsQueued = new AtomicBoolean();
    /** The most waiting jobs one operation looks at; more wait for the next. */
    private static final int DEPENDENTS_PER_TURN = 500;

    public SchedulerEngine(Mutiny.SessionFactory sessions, SerialExecutor serial, Outbox outbox, JobWatchers watchers,
            SchedulerConfig config, LeaderState leader, EnrolmentKey enrolment, HostAgents agents, Tracer tracer) {
        this.enrolment = enrolment;
        this.leader = leader;
        this.serial = serial;
        this.watchers = watchers;
        this.config = config;
        this.spot = new SpotPolicy(config.spotMaxInterruptions(), config.spotPoolAvoidance().toMillis(), 0.5);
        this.rows = new JobRows(config, spot, new RetryPolicy(config.maxRetries(), Set.of(2, 126, 127)));
        JobRows.sealWith(config.secretsKeyFile().map(f -> SecretSeal.fromFile(java.nio.file.Path.of(f)))
                .orElse(SecretSeal.NONE));
        this.memory = new Memory(config, rows);
        this.txs = new Transactions(sessions, serial, outbox, watchers, leader, config,
                new Work.Tools(outbox, rows, memory, config, agents, tracer));
        this.allocationEvents = new AllocationEvents(rows, memory);
        PlacementFramework framework = new PlacementFramework(Profile.service(memory.fragmentation,
                config.hostTimeout().toMillis(), config.xidQuarantine().toMillis(), config.feasibleHostsToScore()));
        this.submissions = new Submissions(txs, memory, framework, config, leader, this::scheduleSoon, tracer);
        this.turn = new SchedulingTurn(txs, memory, new SchedulingPass(framework,
                config.defaultRuntimeEstimate().toSeconds()), rows, config, allocationEvents);
        this.reads = new StateReads(sessions, Memory.recentEnds(config));
        txs.afterOperation(this::releaseDependentsSoon);
        this.timeLimits = new TimeLimitSweep(txs, memory, config);
        this.nodeRules = new NodeEvents.Settings(config.spotNotice(), config.preemptionGrace(), config.xidQuarantine());
    }

    /**
     * What a submission returned: the job (an array's element 0), whether the request id had been seen before, and
     * for an array how many elements it has (0: a job of its own).
     */
    public record Submitted(JobView job, boolean duplicate, int arrayCount) {
        public Submitted(JobView job, boolean duplicate) {
            this(job, duplicate, 0);
        }
    }

    void onStart(@Observes StartupEvent event, Vertx vertx) {
        this.vertx = vertx;
        LOG.info(dev.gpucloud.contracts.kafka.Enrolment.startupNote(enrolment.verifier()));
        LOG.info(enrolment.verifier() != null
                ? "secret variables in a START are sealed for the agent enrolled for its host (AES-256-GCM)"
                : "secret variables in a START go to the agent in the clear: no enrolment key (docs/security.md,"
                        + " \"Secret job variables\")");
        config.secretsKeyFile().ifPresentOrElse(
                f -> LOG.infof("jobs' secret variables are sealed at rest (AES-256-GCM) with the keys of %s", f),
                () -> LOG.warn("no gpucloud.scheduler.secrets-key-file: jobs' secret variables are stored in the clear"
                        + " in PostgreSQL (docs/security.md, \"Secret job variables\")"));
        // hosts are heard from now on: nothing from before this start counts as their silence
        memory.liveness.listeningSince(System.currentTimeMillis());
        vertx.setPeriodic(config.outboxRetryInterval().toMillis(), id -> txs.publishOutbox());
        vertx.setPeriodic(config.rescheduleInterval().toMillis(), id -> scheduleSoon().subscribe().with(v -> { }));
        vertx.setPeriodic(config.sweepInterval().toMillis(), id -> {
            if (turn.sweepDue(System.currentTimeMillis())) {
                scheduleSoon().subscribe().with(v -> { });
            }
        });
        vertx.setPeriodic(config.timeLimitSweep().toMillis(), id -> sweepTimeLimits());
    }

    /** Only the leader applies time limits; a failed sweep is tried again at the next one. */
    private void sweepTimeLimits() {
        if (!leader.leads()) {
            return;
        }
        timeLimits.sweep().subscribe().with(n -> {
            if (n > 0) {
                scheduleSoon().subscribe().with(v -> { });
            }
        }, f -> LOG.warnf("the time-limit sweep failed (%s); the next one retries", DatabaseFailures.clip(f)));
    }

    // ---------------------------------------------------------------- leadership

    /**
     * This instance leads now ({@link dev.gpucloud.scheduler.service.leader.Leadership}), behind any operation
     * still running: a standby that followed the leader replays what changed since its last read (a
     * catch-up); any other rebuilds jobs, allocations and the queue from the database. Then it schedules.
     * The fleet (inventory and telemetry) was kept warm meanwhile. Returns what was restored.
     */
    public Uni<String> takeOver() {
        return serial.run(() -> catchUpOrRestore().call(this::restoreCordons))
                .invoke(restored -> LOG.infof("restored %s from the database", restored))
                .call(() -> {
                    txs.publishOutbox();
                    return scheduleSoon();
                })
                .invoke(() -> {
                    // what ended while no one led (or before this one read) was not replayed: look at every waiter
                    memory.state.allWaitingDue();
                    releaseDependentsSoon();
                });
    }

    /** A takeover's read: a following standby's catch-up, or everything. Runs on the serial executor. */
    private Uni<String> catchUpOrRestore() {
        if (followed != null) {
            String since = followed;
            followed = null; // from now on memory moves with this instance's own writes
            return reads.readChangedSince(since).map(this::replayChanged)
                    .map(n -> "the changes to " + n + " row(s) since its last read as a standby (now "
                            + memory.state.fleet().assignments().size() + " held allocation(s), "
                            + memory.state.running().size() + " running and " + memory.state.queue().size()
                            + " queued job(s))")
                    .call(this::failUnreadable)
                    .onFailure().recoverWithUni(f -> {
                        LOG.warnf("could not catch up (%s); reading everything instead",
                                DatabaseFailures.clip(f));
                        resetState();
                        return restore();
                    });
        }
        resetState();
        return restore();
    }

    /**
     * This instance no longer leads: forgets jobs, allocations and the queue (the next takeover rebuilds
     * them), and ends WatchJob streams so their clients move to the leader. The fleet stays.
     */
    public Uni<Void> stepDown() {
        return serial.run(() -> {
            resetState();
            watchers.endAll();
            return Uni.createFrom().voidItem();
        });
    }

    // ---------------------------------------------------------------- a standby follows the leader

    /**
     * The database snapshot ({@code pg_snapshot} as text) whose rows a standby's memory reflects; null on the
     * leader, and on a standby that has not read yet. Owned by the serial executor.
     */
    private String followed;
    /** Open jobs whose spec a standby could not read: a catch-up fails them, as a restore would. */
    private final Set<String> unreadableOpen = new HashSet<>();

    /**
     * A standby keeps its memory in step with the leader's writes, replaying them as the leader did: the first
     * time it reads every open row, afterwards only the rows written by transactions its last read could not
     * see (migration V7's {@code change_xid}). Returns how many rows it replayed; nothing on the leader. Should
     * a replay go wrong, memory is emptied and the next call reads everything again.
     */
    public Uni<Integer> follow() {
        return serial.run(() -> {
            if (leader.leads()) {
                return Uni.createFrom().item(0);
            }
            if (followed == null) {
                return reads.readOpenWork().map(open -> {
                    resetState();
                    unreadableOpen.clear();
                    memory.replayOpen(open, unreadableOpen);
                    followed = open.snapshot();
                    return open.held().size() + open.jobs().size();
                }).call(this::restoreCordons).onFailure(f -> !(f instanceof NotLeaderException)).invoke(f -> lostTrack());
            }
            String since = followed;
            return reads.readChangedSince(since).map(this::replayChanged).call(this::restoreCordons)
                    .onFailure().invoke(f -> lostTrack());
        });
    }

    /**
     * Makes the fleet's operator cordons what the database holds (at a takeover; and on a standby at every follow,
     * since a cordon carries no {@code change_xid}: the table is small and read whole). Runs on the serial executor.
     */
    private Uni<Void> restoreCordons() {
        return reads.readCordons().invoke(cordons -> {
            if (!cordons.equals(memory.fleet.cordons())) {
                memory.fleet.replaceCordons(cordons);
                LOG.infof("%d host(s) cordoned by operators: %s", cordons.size(),
                        cordons.keySet().stream().limit(20).toList());
            }
        }).replaceWithVoid();
    }

    private void lostTrack() {
        followed = null;
        resetState();
    }

    private int replayChanged(StateReads.Changed changed) {
        int n = memory.replayChanged(changed, unreadableOpen);
        if (followed != null) {
            followed = changed.snapshot();
        }
        return n;
    }

    private Uni<Void> failUnreadable() {
        List<String> ids = List.copyOf(unreadableOpen);
        unreadableOpen.clear();
        return Transactions.inTurn(ids, id -> turn.failJob(id, Work.UNREADABLE, null));
    }

    private void resetState() {
        followed = null;
        pendingJobs = 0;
        memory.reset();
    }

    /**
     * Rebuilds memory from the database by replaying the open rows, through the same {@link SchedulerState#replay}
     * the live path uses for each operation's rows: held GPUs, then running jobs and the queue in submission order.
     */
    private Uni<String> restore() {
        unreadableOpen.clear();
        return reads.readOpenWork().map(open -> memory.replayOpen(open, unreadableOpen)).call(this::failUnreadable);
    }

    // ---------------------------------------------------------------- API operations

    /**
     * Accepts a job, or returns the job of an earlier request with the same id and spec ({@link Submissions}).
     * Refuses an unknown tenant, a request id reused for another spec, a tenant over its hard quota, and a job
     * no host of the fleet could ever run.
     */
    public Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec) {
        return submit(tenant, clientRequestId, spec, Context.current());
    }

    /**
     * As {@link #submit(String, String, JobSpec)}, the job's trace a child of {@code trace} (the SubmitJob call's
     * span, a job.requests record's parent): every later span of the job continues it.
     */
    public Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec, Context trace) {
        return submissions.submit(tenant, clientRequestId, spec, null, trace);
    }

    /**
     * Accepts {@code spec} as an array of jobs ({@link JobArrays}), all of them or none, or returns the array of an
     * earlier request with the same id and spec; {@code clientRequestId} names the whole array.
     */
    public Uni<Submitted> submitArray(String tenant, String clientRequestId, JobSpec spec, JobArrays.Plan array,
            Context trace) {
        return submissions.submit(tenant, clientRequestId, spec, array, trace);
    }

    /** Cancels a job that has not ended and stops its workers; an ended job is returned as it is. */
    public Uni<JobView> cancel(String jobId, String reason) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        return txs.operation(changes -> txs.tx(changes, w -> w.job(jobId).flatMap(job -> {
            if (job == null) {
                return Uni.createFrom().failure(new JobNotFoundException(jobId));
            }
            if (job.state.isFinal()) {
                return w.view(job);
            }
            return w.activeAllocations(job).flatMap(active -> {
                JobSpec spec = readableSpec(job); // cancelled all the same if unreadable: ending it needs no spec
                JobRow row = rows.rowOf(job, spec);
                return w.carryOut(job, spec, row, JobCommands.cancel(row, reason, System.currentTimeMillis()), active)
                        .flatMap(v -> w.view(job));
            });
        })));
    }

    // ---------------------------------------------------------------- events from the fleet

    /** A host's fresh description: it may have room for pending jobs. */
    public Uni<Void> hostReported(HostInventory inventory) {
        return txs.operation(changes -> {
            boolean isNew = memory.fleet.node(inventory.nodeId()).isEmpty();
            Instant now = Instant.now();
            Instant seen = inventory.observedAt().isAfter(now) ? now : inventory.observedAt();
            warnIfRdmaPortsDown(inventory);
            List<Assignment> displaced = memory.fleet.upsert(inventory, seen.toEpochMilli());
            Long early = memory.heard.waitingSince(inventory.nodeId());
            if (early != null) { // telemetry that came before this inventory record: the host was alive then
                memory.fleet.heard(inventory.nodeId(), early);
            }
            if (isNew) {
                try (LogFields fields = LogFields.of(LogFields.NODE_ID, inventory.nodeId())) {
                    LOG.infof("host %s joined: %d x %s, %s, fabric %s", inventory.nodeId(), inventory.gpus().size(),
                            inventory.gpus().isEmpty() ? "no GPU" : inventory.gpus().get(0).model(),
                            inventory.capacityType(), inventory.rdmaFabric());
                }
            }
            memory.refreshCapacity();
            return lose(changes, displaced.stream().map(Assignment::allocationId).toList(),
                    "host " + inventory.nodeId() + " no longer has the GPUs it held");
        }).call(this::scheduleSoon);
    }

    /**
     * A host that names an RDMA fabric but whose agent found RDMA ports, none of them ACTIVE, is placed as a
     * host without a fabric until a port is up again (the cluster model's rule, {@code NodeState}): say so.
     */
    private static void warnIfRdmaPortsDown(HostInventory h) {
        if (h.rdmaFabric() != null && !h.rdmaFabric().isBlank() && !h.rdmaNics().isEmpty() && !h.hasActiveRdma()) {
            LOG.warnf("host %s is on RDMA fabric %s but none of its %d RDMA port(s) is ACTIVE (%s): placing it as a"
                    + " host without a fabric until one is", h.nodeId(), h.rdmaFabric(), h.rdmaNics().size(),
                    h.rdmaNics().stream().map(n -> n.device() + "/" + n.port() + " " + n.state()).toList());
        }
    }

    /** A host left (inventory tombstone): its allocations are lost and their jobs resume elsewhere. */
    public Uni<Void> hostLeft(String nodeId) {
        return txs.operation(changes -> {
            List<Assignment> lost = memory.fleet.remove(nodeId);
            Set<String> foreign = memory.reconciler.foreignHolds();
            lost = lost.stream().filter(a -> !foreign.contains(a.allocationId())).toList();
            memory.reconciler.forgetHost(nodeId);
            memory.refreshCapacity();
            try (LogFields fields = LogFields.of(LogFields.NODE_ID, nodeId)) {
                LOG.infof("host %s left; %d allocation(s) on it are lost", nodeId, lost.size());
            }
            return lose(changes, lost.stream().map(Assignment::allocationId).toList(), "host " + nodeId + " left");
        }).call(this::scheduleSoon);
    }

    private Uni<Void> lose(Changes changes, List<String> allocationIds, String why) {
        if (allocationIds.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return txs.tx(changes, w -> Transactions.inTurn(allocationIds, id -> w.lose(id, why)));
    }

    /**
     * A host's agent reported telemetry at {@code at}: the host is alive, and (unless {@code running} is
     * null) runs exactly those allocations. Called for every telemetry record, so it only notes them; the
     * cluster model takes them in before it is next read.
     */
    public void heardFrom(String nodeId, Instant at, List<AllocationReport> running) {
        memory.heard.heard(nodeId, at.toEpochMilli(), running);
    }

    /** A host was heard at {@code at}, saying nothing of what it runs. */
    public void heardFrom(String nodeId, Instant at) {
        heardFrom(nodeId, at, null);
    }

    /** What an operator's cordon, drain or undrain did: the host now, the jobs asked to move, whether it changed. */
    public record Cordoned(ClusterSnapshot.NodeView node, String nodeId, List<String> jobsMoving, boolean changed) {
    }

    /**
     * An operator keeps new work off a known host, durably (migration V9): with {@code drain}, every job with a
     * worker there is also asked to checkpoint within {@code grace} (null: the preemption grace) and then stop and resume elsewhere, as for a
     * rebalance recommendation (a job placed but not yet started is requeued at once). A repeat is harmless: it
     * updates the reason, and a drain asks the jobs still on the host again, with the new grace.
     */
    public Uni<Cordoned> cordon(String nodeId, boolean drain, String reason, String subject, java.time.Duration grace) {
        java.time.Duration within = grace != null ? grace : config.preemptionGrace();
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        return txs.operation(changes -> {
            memory.takeInWhatHostsSaid();
            if (memory.fleet.node(nodeId).isEmpty()) {
                return Uni.createFrom().failure(new HostNotFoundException(nodeId));
            }
            boolean changed = !reason.equals(memory.fleet.cordons().get(nodeId));
            List<String> moving = drain ? memory.fleet.jobsOn(nodeId) : List.of();
            long deadline = System.currentTimeMillis() + within.toMillis();
            String why = "host " + nodeId + " drained by an operator: " + dev.gpucloud.contracts.limits.Check.clip(reason);
            return txs.tx(changes, w -> w.session().find(HostCordonEntity.class, nodeId).flatMap(row -> {
                        HostCordonEntity cordon = row != null ? row : new HostCordonEntity();
                        cordon.nodeId = nodeId;
                        cordon.drained = drain || row != null && row.drained;
                        cordon.reason = reason;
                        cordon.bySubject = subject;
                        cordon.since = row != null ? row.since : Instant.now();
                        return row != null ? Uni.createFrom().voidItem() : w.session().persist(cordon);
                    }).call(() -> checkpointJobs(changes, moving, deadline, why)))
                    .map(v -> {
                        memory.fleet.cordon(nodeId, reason);
                        LOG.infof("host %s %s by %s (%s)%s", nodeId, drain ? "drained" : "cordoned", subject,
                                dev.gpucloud.contracts.limits.Check.clip(reason),
                                moving.isEmpty() ? "" : ": asking " + moving.size() + " job(s) to move off");
                        return new Cordoned(nodeView(nodeId), nodeId, moving, changed || !moving.isEmpty());
                    });
        }).call(this::scheduleSoon);
    }

    /**
     * Lifts an operator's cordon or drain, and a drain the host's own agent asked for: the host takes work again.
     * Jobs a drain already asked to move still move. Works for a host that has left since, as long as it has a
     * cordon.
     */
    public Uni<Cordoned> undrain(String nodeId, String subject) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        return txs.operation(changes -> {
            memory.takeInWhatHostsSaid();
            boolean known = memory.fleet.node(nodeId).isPresent();
            boolean cordoned = memory.fleet.cordons().containsKey(nodeId);
            if (!known && !cordoned) {
                return Uni.createFrom().failure(new HostNotFoundException(nodeId));
            }
            boolean agentDrained = known && memory.fleet.node(nodeId).get().draining() && !cordoned;
            return txs.tx(changes, w -> w.session().createMutationQuery(
                                    "delete from HostCordonEntity where nodeId = :id").setParameter("id", nodeId)
                            .executeUpdate())
                    .map(deleted -> {
                        memory.fleet.uncordon(nodeId);
                        memory.fleet.drain(nodeId, false);
                        LOG.infof("host %s takes work again: undrained by %s", nodeId, subject);
                        return new Cordoned(known ? nodeView(nodeId) : null, nodeId, List.of(),
                                cordoned || deleted > 0 || agentDrained);
                    });
        }).call(this::scheduleSoon);
    }

    private ClusterSnapshot.NodeView nodeView(String nodeId) {
        return memory.fleet.node(nodeId).map(n -> ClusterSnapshot.view(memory.fleet, n, System.currentTimeMillis(),
                config.hostTimeout().toMillis())).orElse(null);
    }

    /**
     * Spot notices, rebalance advice, GPU faults, lost heartbeats, drains: the fleet takes the event in as
     * scheduler-core's {@link NodeEvents} rules say, and the work they move off the host is asked to
     * checkpoint (and then stop) or is lost.
     */
    public Uni<Void> nodeEvent(NodeEvent event) {
        return txs.operation(changes -> {
            NodeEvents.Outcome o = NodeEvents.apply(memory.fleet, spot, event, System.currentTimeMillis(), nodeRules);
            if (o.alarming()) {
                LOG.warn(o.said());
            } else {
                LOG.info(o.said());
            }
            return checkpointJobs(changes, o.checkpoint(), o.deadlineMillis(), o.why())
                    .call(() -> lose(changes, o.lost(), o.why()));
        }).call(this::scheduleSoon);
    }

    /** Asks each job to checkpoint by the deadline, then stop and resume elsewhere. */
    private Uni<Void> checkpointJobs(Changes changes, List<String> jobs, long deadlineMillis, String why) {
        if (jobs.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return txs.tx(changes, w -> Transactions.inTurn(jobs, jobId -> w.job(jobId).flatMap(job -> job == null
                ? Uni.createFrom().voidItem() : w.askToCheckpoint(job, deadlineMillis, why, null))));
    }

    /** Applies what a host's agent saw happen to an allocation. Repeats are harmless. */
    public Uni<Void> allocationEvent(AllocationEvent event) {
        return allocationEvents(List.of(event)).flatMap(failed -> failed.isEmpty() ? Uni.createFrom().voidItem()
                : Uni.createFrom().failure(failed.values().iterator().next()));
    }

    /**
     * Applies a batch of allocation events (one poll of {@code allocation.events}) in ONE transaction,
     * in order. If that transaction fails, each event is applied alone, in its own, so one event the
     * database refuses cannot hold up the others: the result maps each such event (by its index in
     * {@code events}) to its failure, for the caller to dead-letter. Repeats are harmless.
     */
    public Uni<Map<Integer, Throwable>> allocationEvents(List<AllocationEvent> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        Uni<Map<Integer, Throwable>> together = txs.operation(changes -> txs.tx(changes, w -> {
            Uni<Void> chain = w.preload(events.stream().map(AllocationEvent::jobId).distinct().toList());
            for (AllocationEvent event : events) {
                chain = chain.call(() -> allocationEvents.apply(w, event));
            }
            return chain;
        })).replaceWith(Map.<Integer, Throwable>of());
        if (events.size() == 1) {
            return together.onFailure().recoverWithItem(f -> Map.of(0, f)).call(this::scheduleSoon);
        }
        return together.onFailure(f -> !(f instanceof NotLeaderException)).recoverWithUni(f -> {
            LOG.warnf("a batch of %d allocation events failed (%s); applying them one at a time", events.size(),
                    f.toString());
            Map<Integer, Throwable> failed = new java.util.TreeMap<>();
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (int i = 0; i < events.size(); i++) {
                int index = i;
                chain = chain.call(() -> txs.operation(changes -> txs.tx(changes,
                                w -> allocationEvents.apply(w, events.get(index))))
                        .onFailure().invoke(e -> failed.put(index, e))
                        .onFailure().recoverWithNull());
            }
            return chain.replaceWith(failed);
        }).call(this::scheduleSoon);
    }

    /** How the scheduling passes go, for readiness: when one last completed, what waited, the last failure. */
    public record PassProgress(long lastCompletedMillis, int pendingJobs, String lastFailure) {
    }

    public PassProgress passProgress() {
        return new PassProgress(lastPassCompletedMillis, pendingJobs, lastPassFailure);
    }

    /** A consistent copy of the cluster model, taken between operations. */
    public Uni<ClusterSnapshot> cluster() {
        return cluster(null, "", Integer.MAX_VALUE);
    }

    /** One page of hosts ({@link ClusterSnapshot#page}): at most {@code limit}, in id order after {@code afterNodeId}. */
    public Uni<ClusterSnapshot> cluster(String afterNodeId, String gpuModel, int limit) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader()); // a standby does not know what is held
        }
        return serial.run(() -> {
            memory.takeInWhatHostsSaid();
            return Uni.createFrom().item(ClusterSnapshot.page(memory.fleet, System.currentTimeMillis(),
                    config.hostTimeout().toMillis(), afterNodeId, gpuModel, limit));
        });
    }

    /** A tenant's quota and usage, from the leader's queue (a standby does not know what is held). */
    public Uni<TenantUsageView> tenantUsage(String tenant) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        return serial.run(() -> {
            var queue = memory.state.queue();
            var quota = queue.quota(tenant);
            int running = 0;
            for (var job : memory.state.running()) {
                if (job.tenant().equals(tenant)) {
                    running++;
                }
            }
            int pending = 0;
            long pendingMilli = 0;
            for (var job : queue.jobs()) {
                if (job.tenant().equals(tenant)) {
                    pending++;
                    pendingMilli += (long) job.request().workers() * job.request().milliPerWorker();
                }
            }
            double share = queue.dominantShare(tenant); // not finite while the fleet is empty
            return Uni.createFrom().item(new TenantUsageView(tenant, quota.softMilli(), quota.hardMilli(),
                    quota.weight(), running, queue.runningMilli(tenant), pending, pendingMilli,
                    Double.isFinite(share) ? share : 0));
        });
    }

    // ---------------------------------------------------------------- dependencies

    /**
     * Once an operation ended jobs that others wait for ({@link SchedulerState#takeDue}), one more operation looks at
     * those waiters: each whose dependencies all ended as asked joins the queue, each that can never run is
     * cancelled saying why (which may in turn release or cancel its own waiters: the next look). Queued once at a
     * time, like the pass.
     */
    private void releaseDependentsSoon() {
        if (!leader.leads() || !memory.state.anyDue() || !dependentsQueued.compareAndSet(false, true)) {
            return;
        }
        List<String> taken = new ArrayList<>();
        txs.operation(changes -> {
                    dependentsQueued.set(false);
                    taken.addAll(memory.state.takeDue(DEPENDENTS_PER_TURN));
                    if (taken.isEmpty()) {
                        return Uni.createFrom().item(false);
                    }
                    return txs.tx(changes, w -> lookAtWaiters(w, taken));
                })
                .subscribe().with(released -> {
                    if (released) {
                        scheduleSoon().subscribe().with(v -> { });
                    }
                }, f -> {
                    dependentsQueued.set(false);
                    memory.state.markDue(taken); // looked at again once the database answers
                    LOG.warnf("could not look at %d job(s) waiting for dependencies (%s); trying again",
                            taken.size(), DatabaseFailures.clip(f));
                    Vertx v = vertx;
                    if (v != null) {
                        v.setTimer(PASS_RETRY_MILLIS, id -> releaseDependentsSoon());
                    }
                });
    }

    /** Applies what the dependencies of each waiting job of {@code jobIds} say now; true if some joined the queue. */
    private Uni<Boolean> lookAtWaiters(Work w, List<String> jobIds) {
        return w.session().createSelectionQuery("from JobEntity where id in :ids and state = :s", JobEntity.class)
                .setParameter("ids", jobIds).setParameter("s", JobState.WAITING_FOR_DEPENDENCIES).getResultList()
                .flatMap(waiters -> {
                    Map<String, Set<String>> depsByTenant = new HashMap<>();
                    Map<String, JobSpec> specs = new HashMap<>();
                    for (JobEntity job : waiters) {
                        JobSpec spec = readableSpec(job);
                        specs.put(job.id, spec);
                        if (spec != null) {
                            spec.after().forEach(d -> depsByTenant.computeIfAbsent(job.tenant, t -> new HashSet<>())
                                    .add(d.jobId()));
                        }
                    }
                    Map<String, Map<String, List<Dependencies.Standing>>> standing = new HashMap<>();
                    Uni<Void> reads = Uni.createFrom().voidItem();
                    for (var e : depsByTenant.entrySet()) {
                        reads = reads.call(() -> JobRows.standing(w.session(), e.getKey(), e.getValue())
                                .invoke(found -> standing.put(e.getKey(), found)));
                    }
                    boolean[] released = {false};
                    return reads.call(() -> Transactions.inTurn(waiters, job -> {
                        JobSpec spec = specs.get(job.id);
                        JobRow row = rows.rowOf(job, spec);
                        long now = System.currentTimeMillis();
                        JobCommands.Outcome outcome = spec == null
                                ? JobCommands.fail(row, Work.UNREADABLE, now)
                                : JobCommands.dependencies(row, Dependencies.evaluate(spec.after(),
                                        standing.getOrDefault(job.tenant, Map.of())), now);
                        released[0] |= row.state() == JobState.PENDING;
                        return w.carryOut(job, spec, row, outcome, List.of());
                    })).map(v -> released[0]);
                });
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * Queues a scheduling pass behind the operations already waiting, unless one is queued and has
     * not started yet: that one will see this caller's committed change too. A burst of submissions
     * thus costs one pass, not one each.
     */
    private Uni<Void> scheduleSoon() {
        if (!leader.leads() || !passQueued.compareAndSet(false, true)) {
            return Uni.createFrom().voidItem();
        }
        return serial.run(() -> {
                    passQueued.set(false);
                    return turn.run().invoke(() -> {
                        lastPassCompletedMillis = System.currentTimeMillis();
                        lastPassFailure = null;
                        pendingJobs = memory.state.queue().size();
                    });
                }).invoke(txs::publishOutbox)
                .onFailure().recoverWithItem(f -> {
                    passQueued.set(false);
                    lastPassFailure = DatabaseFailures.clip(f);
                    pendingJobs = Math.max(pendingJobs, 1);
                    LOG.warn("scheduling pass failed; the next one retries", f);
                    retrySoon(f);
                    return null;
                });
    }

    /**
     * A pass that failed on the database (a restart, a dropped connection) is tried again a second later,
     * not at the next reschedule interval: what waited for it should not wait ten seconds more.
     */
    private void retrySoon(Throwable failure) {
        Vertx v = vertx;
        if (v != null && leader.leads() && DatabaseFailures.isTransient(failure)) {
            v.setTimer(PASS_RETRY_MILLIS, id -> scheduleSoon().subscribe().with(x -> { }));
        }
    }
}
