package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.allocationRecord;
import static dev.gpucloud.scheduler.service.engine.JobRows.placementOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.readableSpec;
import static dev.gpucloud.scheduler.service.engine.JobRows.shape;
import static dev.gpucloud.scheduler.service.engine.JobRows.specOf;
import static dev.gpucloud.scheduler.service.engine.JobRows.store;
import static dev.gpucloud.scheduler.service.engine.JobRows.viewOf;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationReport;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.framework.Status;
import dev.gpucloud.scheduler.framework.plugins.FragmentationGradientScore;
import dev.gpucloud.scheduler.lifecycle.GangSettlement;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.liveness.AllocationReconciler;
import dev.gpucloud.scheduler.liveness.HostLiveness;
import dev.gpucloud.scheduler.lifecycle.RetryPolicy;
import dev.gpucloud.scheduler.state.JobCommands;
import dev.gpucloud.scheduler.state.JobRow;
import dev.gpucloud.scheduler.state.NodeEvents;
import dev.gpucloud.scheduler.queue.JobQueue;
import dev.gpucloud.scheduler.queue.PassResult;
import dev.gpucloud.scheduler.queue.QueuedJob;
import dev.gpucloud.scheduler.queue.RunningJob;
import dev.gpucloud.scheduler.queue.SchedulingPass;
import dev.gpucloud.scheduler.queue.TenantQuota;
import dev.gpucloud.scheduler.state.SchedulerState;
import dev.gpucloud.scheduler.state.SchedulerState.AllocationRecord;
import dev.gpucloud.scheduler.state.SchedulerState.JobRecord;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.CheckpointEntity;
import dev.gpucloud.scheduler.service.persistence.CheckpointReportEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.spot.SpotPolicy;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
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

    private final Mutiny.SessionFactory sessions;
    private final SerialExecutor serial;
    private final Outbox outbox;
    private final JobWatchers watchers;
    private final SchedulerConfig config;
    private final LeaderState leader;
    private volatile Vertx vertx;
    private final Fleet fleet = new Fleet();
    private final PlacementFramework framework;
    private final SchedulingPass pass;
    /**
     * Queue, running jobs, held GPUs and stop requests: changed only by replaying committed rows (see
     * {@link Changes}), live and at a takeover alike.
     */
    private SchedulerState state;
    private final SpotPolicy spot;
    /** What node events do: durations from the configuration. */
    private final NodeEvents.Settings nodeRules;
    /** Rows to scheduler-core's records and back. */
    private final JobRows rows;
    /** What a takeover and a following standby read back. */
    private final StateReads reads;
    /** Learns the shapes of accepted jobs, so packing keeps room for what the cluster runs (FGD). */
    private final FragmentationGradientScore fragmentation = new FragmentationGradientScore(1000);
    private final Map<String, String> lastReason = new HashMap<>();
    /** Why a requeued job went back to the queue, kept in its pending reason until it is placed again. */
    private final Map<String, String> requeueNotes = new HashMap<>();
    /** The latest word from each host since the cluster model last took it in: when, and what it runs. */
    private final Map<String, Heard> heard = new ConcurrentHashMap<>();
    /** Loses allocations on evidence only; silence counts from when this instance began to listen. */
    private final HostLiveness liveness;
    /** What agents say they run against what the scheduler holds. */
    private AllocationReconciler reconciler;
    /** When the last scheduling pass completed, and how many jobs waited then: what readiness reports. */
    private volatile long lastPassCompletedMillis = System.currentTimeMillis();
    private volatile int pendingJobs;
    private volatile String lastPassFailure;
    private final java.util.concurrent.atomic.AtomicBoolean passQueued = new java.util.concurrent.atomic.AtomicBoolean();
    /** Submissions waiting for their group commit; guarded by itself, as is {@link #submitTurnQueued}. */
    private final java.util.ArrayDeque<Submission> submissions = new java.util.ArrayDeque<>();
    private boolean submitTurnQueued;

    /** A host was heard at {@code at}; {@code running} is what its agent runs (null: the agent does not say). */
    private record Heard(Instant at, List<AllocationReport> running) {
    }

    public SchedulerEngine(Mutiny.SessionFactory sessions, SerialExecutor serial, Outbox outbox, JobWatchers watchers,
            SchedulerConfig config, LeaderState leader) {
        this.sessions = sessions;
        this.leader = leader;
        this.serial = serial;
        this.outbox = outbox;
        this.watchers = watchers;
        this.config = config;
        this.framework = new PlacementFramework(Profile.builder("production")
                .score(fragmentation, 2)
                .heartbeatTimeoutMillis(config.hostTimeout().toMillis())
                .xidQuarantineMillis(config.xidQuarantine().toMillis())
                .feasibleToScore(config.feasibleHostsToScore()).build());
        this.pass = new SchedulingPass(framework, config.defaultRuntimeEstimate().toSeconds());
        this.spot = new SpotPolicy(config.spotMaxInterruptions(), config.spotPoolAvoidance().toMillis(), 0.5);
        this.rows = new JobRows(config, spot, new RetryPolicy(config.maxRetries(), Set.of(2, 126, 127)));
        this.reads = new StateReads(sessions, recentEnds());
        this.nodeRules = new NodeEvents.Settings(config.spotNotice(), config.preemptionGrace(), config.xidQuarantine());
        this.liveness = new HostLiveness(config.hostLostTimeout().toMillis(), System.currentTimeMillis());
        this.reconciler = new AllocationReconciler(config.reconcileGrace().toMillis());
        this.state = new SchedulerState(fleet, newQueue());
    }

    private JobQueue newQueue() {
        JobQueue q = new JobQueue();
        q.setDefaultQuota(parseQuota("gpucloud.scheduler.default-quota", config.defaultQuota()));
        config.quota().forEach((tenant, value) -> q.setQuota(tenant, parseQuota("gpucloud.scheduler.quota." + tenant,
                value)));
        return q;
    }

    static TenantQuota parseQuota(String key, String value) {
        String[] parts = value.trim().split("/");
        try {
            if (parts.length != 2) {
                throw new NumberFormatException();
            }
            return TenantQuota.gpus(Long.parseLong(parts[0].trim()), Long.parseLong(parts[1].trim()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be 'soft/hard' in GPUs with soft <= hard (0 = none), was '"
                    + value + "'");
        }
    }

    /** What a submission returned: the job, and whether the request id had been seen before. */
    public record Submitted(JobView job, boolean duplicate) {
    }

    void onStart(@Observes StartupEvent event, Vertx vertx) {
        this.vertx = vertx;
        // hosts are heard from now on: nothing from before this start counts as their silence
        liveness.listeningSince(System.currentTimeMillis());
        vertx.setPeriodic(config.outboxRetryInterval().toMillis(), id -> publishOutbox());
        vertx.setPeriodic(config.rescheduleInterval().toMillis(), id -> scheduleSoon().subscribe().with(v -> { }));
    }

    // ---------------------------------------------------------------- leadership

    /**
     * This instance leads now ({@link dev.gpucloud.scheduler.service.leader.Leadership}), behind any operation
     * still running: a standby that followed the leader replays what changed since its last read (a
     * catch-up); any other rebuilds jobs, allocations and the queue from the database. Then it schedules.
     * The fleet (inventory and telemetry) was kept warm meanwhile. Returns what was restored.
     */
    public Uni<String> takeOver() {
        return serial.run(() -> {
                    if (followed != null) {
                        String since = followed;
                        followed = null; // from now on memory moves with this instance's own writes
                        return reads.readChangedSince(since).map(this::replayChanged)
                                .map(n -> "the changes to " + n + " row(s) since its last read as a standby (now "
                                        + state.fleet().assignments().size() + " held allocation(s), "
                                        + state.running().size() + " running and " + state.queue().size()
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
                })
                .invoke(restored -> LOG.infof("restored %s from the database", restored))
                .call(() -> {
                    publishOutbox();
                    return scheduleSoon();
                });
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
                    replayOpen(open, unreadableOpen);
                    followed = open.snapshot();
                    return open.held().size() + open.jobs().size();
                }).onFailure(f -> !(f instanceof NotLeaderException)).invoke(f -> lostTrack());
            }
            String since = followed;
            return reads.readChangedSince(since).map(this::replayChanged).onFailure().invoke(f -> lostTrack());
        });
    }

    private void lostTrack() {
        followed = null;
        resetState();
    }

    /**
     * Replays changed rows: allocations that gave their GPUs back first (a GPU may have changed hands), then
     * those that hold them, then the jobs. Returns how many rows it replayed.
     */
    private int replayChanged(StateReads.Changed changed) {
        for (AllocationEntity a : changed.allocations()) {
            if (!a.isActive()) {
                ended(a);
            }
        }
        reconciler.forgetEndsBefore(System.currentTimeMillis() - recentEnds().toMillis());
        for (AllocationEntity a : changed.allocations()) {
            if (a.isActive()) {
                hold(a, changed.tenants().getOrDefault(a.jobId, ""));
            }
        }
        for (JobEntity job : changed.jobs()) {
            JobSpec spec = job.state.isFinal() ? null : readableSpec(job);
            if (!job.state.isFinal() && spec == null) {
                unreadableOpen.add(job.id);
                continue;
            }
            unreadableOpen.remove(job.id);
            JobRecord record = rows.jobRecord(job, spec, changed.heldByJob().getOrDefault(job.id, List.of()));
            state.replay(record);
            if (record instanceof JobRecord.Queued q) {
                fragmentation.observe(q.entry().request());
            }
        }
        if (followed != null) {
            followed = changed.snapshot();
        }
        return changed.allocations().size() + changed.jobs().size();
    }

    private Uni<Void> failUnreadable() {
        List<String> ids = List.copyOf(unreadableOpen);
        unreadableOpen.clear();
        return inTurn(ids, id -> failJob(id, "its stored spec cannot be read", null));
    }

    /**
     * The epoch the transaction now running passed the fence with: operations run one at a time (the serial
     * executor), so this is the current write's, whatever the lead has become since.
     */
    private long writingEpoch;

    /** Adds a node command to the transaction, stamped with the epoch it is written under. */
    private Uni<Void> command(Mutiny.Session s, String nodeId, NodeCommand command) {
        return outbox.add(s, Topics.NODE_COMMANDS, nodeId, command.withEpoch(writingEpoch));
    }

    /** A failure of the moment (the database's) or of the lead (deposed): the work is not the data's fault. */
    private static boolean notNow(Throwable f) {
        return f instanceof NotLeaderException || DatabaseFailures.isTransient(f);
    }

    /**
     * How long an allocation's end is worth knowing: a host's report from up to that long before (telemetry
     * in flight, or the host's last word before it fell silent) may still list it as running.
     */
    private java.time.Duration recentEnds() {
        return config.hostTimeout().compareTo(config.reconcileGrace()) > 0 ? config.hostTimeout().plus(
                config.reconcileGrace()) : config.reconcileGrace().multipliedBy(2);
    }

    /** Takes a held allocation read back from the database into memory; one that cannot be held is logged and left out. */
    private void hold(AllocationEntity a, String tenant) {
        String problem = state.replay(allocationRecord(a, tenant));
        if (problem != null) {
            LOG.errorf("%s of %s on %s is held in the database but cannot be in memory (%s): left out; its host's"
                    + " reports decide", a.id, a.jobId, a.nodeId, problem);
        }
    }

    /**
     * The allocation ended: memory frees its GPUs, and the reconciler will not take a host's older report that
     * still lists it for an allocation the scheduler does not know (and hold its GPUs).
     */
    private void ended(AllocationEntity a) {
        state.replay(new AllocationRecord.Released(a.id));
        long at = a.endedAt == null ? System.currentTimeMillis() : a.endedAt.toEpochMilli();
        if (at > System.currentTimeMillis() - recentEnds().toMillis()) {
            reconciler.ended(a.id, at);
        }
    }

    private void resetState() {
        followed = null;
        for (Assignment a : List.copyOf(fleet.assignments())) {
            fleet.unreserve(a.allocationId());
        }
        state = new SchedulerState(fleet, newQueue());
        lastReason.clear();
        requeueNotes.clear();
        preloaded = null;
        reconciler = new AllocationReconciler(config.reconcileGrace().toMillis());
        pendingJobs = 0;
        refreshCapacity();
    }

    /**
     * A transaction that writes under this instance's epoch: its first statement is the database's fence
     * ({@code gpucloud_fence}), which refuses it once another instance leads; that deposes this one, and the
     * write fails with {@link NotLeaderException} (UNAVAILABLE to a gRPC caller, with the leader's address).
     */
    private <T> Uni<T> tx(Function<Mutiny.Session, Uni<T>> work) {
        long epoch = leader.epoch();
        if (epoch == 0) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        int idleMillis = (int) Math.min(Integer.MAX_VALUE, config.leaderLease().toMillis());
        return sessions.withTransaction(s -> s.createNativeQuery("select gpucloud_fence(?1, ?2)", Long.class)
                        .setParameter(1, epoch).setParameter(2, idleMillis).getSingleResult()
                        .chain(() -> {
                            writingEpoch = epoch;
                            return work.apply(s);
                        }))
                .onFailure(DatabaseFailures::isFenced).transform(f -> leader.fenced(DatabaseFailures.clip(f)));
    }

    /**
     * Rebuilds memory from the database by replaying the open rows, through the same {@link SchedulerState#replay}
     * the live path uses for each operation's rows: held GPUs, then running jobs and the queue in submission order.
     */
    private Uni<String> restore() {
        unreadableOpen.clear();
        return reads.readOpenWork().map(open -> replayOpen(open, unreadableOpen)).call(this::failUnreadable);
    }

    /** Replays every open row into an empty memory; jobs whose spec cannot be read go to {@code unreadable}. */
    private String replayOpen(StateReads.OpenWork open, Set<String> unreadable) {
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
            JobRecord record = rows.jobRecord(job, spec, byJob.getOrDefault(job.id, List.of()));
            state.replay(record);
            if (record instanceof JobRecord.Queued q) {
                fragmentation.observe(q.entry().request());
                queued++;
            }
        }
        return allocs.size() + " held allocation(s), " + state.running().size() + " running and "
                + queued + " queued job(s)" + (unreadable.isEmpty() ? ""
                        : "; " + unreadable.size() + " job(s) with an unreadable spec to fail");
    }

    // ---------------------------------------------------------------- API operations

    /**
     * Accepts a job, or returns the job of an earlier request with the same id and spec. Refuses an
     * unknown tenant, a request id reused for another spec, a tenant over its hard quota, and a job
     * no host of the fleet could ever run.
     *
     * <p>Submissions are group-committed: those that arrive while the executor is busy wait in
     * {@link #submissions} and the next turn accepts all of them in one transaction (one round trip for
     * their earlier requests, one flush for their rows and events), each answered on its own.
     */
    public Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        String specJson = EventCodec.encodeToString(spec);
        return Uni.createFrom().<Submitted>emitter(emitter -> {
                    boolean first;
                    synchronized (submissions) {
                        submissions.add(new Submission(tenant, clientRequestId, spec, specJson, emitter));
                        first = !submitTurnQueued;
                        submitTurnQueued = true;
                    }
                    if (first) {
                        queueSubmitTurn();
                    }
                })
                .call(submitted -> submitted.duplicate() ? Uni.createFrom().voidItem() : scheduleSoon());
    }

    /** One submission waiting for the next group commit. */
    private record Submission(String tenant, String clientRequestId, JobSpec spec, String specJson,
            UniEmitter<? super Submitted> emitter) {
    }

    private void queueSubmitTurn() {
        operation(this::acceptSubmissions).subscribe().with(v -> { }, f -> LOG.warn("a group of submissions failed", f));
    }

    /** Takes every waiting submission (at most {@code submit-batch}) and accepts them in one transaction. */
    private Uni<Void> acceptSubmissions(Changes changes) {
        List<Submission> batch = new ArrayList<>();
        synchronized (submissions) {
            while (!submissions.isEmpty() && batch.size() < Math.max(1, config.submitBatch())) {
                batch.add(submissions.poll());
            }
            submitTurnQueued = !submissions.isEmpty();
        }
        if (submitTurnQueued) {
            queueSubmitTurn(); // the rest wait behind this turn, as one more group
        }
        if (batch.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Map<Submission, Object> outcome = new java.util.IdentityHashMap<>();
        return tx(s -> s.createSelectionQuery(
                        "from JobEntity where tenant in :t and clientRequestId in :r", JobEntity.class)
                .setParameter("t", batch.stream().map(Submission::tenant).distinct().toList())
                .setParameter("r", batch.stream().map(Submission::clientRequestId).distinct().toList())
                .getResultList()
                .flatMap(found -> {
                    Map<String, JobEntity> earlier = new HashMap<>();
                    found.forEach(j -> earlier.put(j.tenant + "\u0000" + j.clientRequestId, j));
                    Map<String, Long> admittedMilli = new HashMap<>();
                    Set<JobEntity> accepted = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (Submission sub : batch) {
                        String key = sub.tenant() + "\u0000" + sub.clientRequestId();
                        JobEntity existing = earlier.get(key);
                        if (existing != null) {
                            if (!existing.specJson.equals(sub.specJson())) {
                                outcome.put(sub, new AdmissionException(AdmissionException.Kind.CONFLICT,
                                        "client_request_id '" + sub.clientRequestId() + "' was already used by job "
                                                + existing.id + " with a different spec"));
                            } else if (accepted.contains(existing)) {
                                outcome.put(sub, new Submitted(viewOf(existing, List.of()), true));
                            } else {
                                chain = chain.call(() -> view(s, existing)
                                        .invoke(v -> outcome.put(sub, new Submitted(v, true))));
                            }
                            continue;
                        }
                        try {
                            long milli = admit(sub.tenant(), sub.spec(), admittedMilli.getOrDefault(sub.tenant(), 0L));
                            admittedMilli.merge(sub.tenant(), milli, Long::sum);
                        } catch (AdmissionException refused) {
                            outcome.put(sub, refused);
                            continue;
                        }
                        JobEntity job = newJob(sub);
                        earlier.put(key, job); // a repeat later in this group is a duplicate of it
                        accepted.add(job);
                        outcome.put(sub, job);
                        fragmentation.observe(PlacementRequest.of(job.id, job.tenant, 1, sub.spec()));
                        chain = chain.call(() -> s.persist(job))
                                .call(() -> announce(s, changes, job, sub.spec(), List.of()));
                    }
                    return chain;
                }))
                .onItemOrFailure().invoke((ignored, failure) -> {
                    for (Submission sub : batch) {
                        Object o = outcome.get(sub);
                        if (failure != null) {
                            sub.emitter().fail(failure);
                        } else if (o instanceof Throwable refused) {
                            sub.emitter().fail(refused);
                        } else if (o instanceof JobEntity job) {
                            sub.emitter().complete(new Submitted(viewOf(job, List.of()), false));
                        } else {
                            sub.emitter().complete((Submitted) o);
                        }
                    }
                })
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    private JobEntity newJob(Submission sub) {
        JobEntity job = new JobEntity();
        Instant now = Instant.now();
        job.id = "job-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        job.tenant = sub.tenant();
        job.clientRequestId = sub.clientRequestId();
        job.name = sub.spec().name();
        job.specJson = sub.specJson();
        job.priority = sub.spec().priority().ordinal();
        job.state = JobState.PENDING;
        job.reason = "waiting for a placement";
        job.submittedAt = now;
        job.updatedAt = now;
        LOG.infof("accepted %s (%s) for tenant %s: %d worker(s) x %s", job.id, sub.spec().name(), sub.tenant(),
                sub.spec().workers(), shape(sub.spec()));
        return job;
    }

    /**
     * Admits a job or throws why not; {@code alreadyAdmitted} is what this tenant's earlier jobs of the
     * same group commit hold (not yet in the queue). Returns the milli-GPUs this job asks for.
     */
    private long admit(String tenant, JobSpec spec, long alreadyAdmitted) {
        if (!knownTenant(config.tenants().orElse(List.of()), tenant)) {
            throw new AdmissionException(AdmissionException.Kind.UNKNOWN_TENANT, "unknown tenant '" + tenant + "'");
        }
        PlacementRequest request = PlacementRequest.of("admission", tenant, 1, spec);
        long milli = (long) request.workers() * request.milliPerWorker();
        String refusal = state.queue().refusal(tenant, milli, alreadyAdmitted);
        if (refusal != null) {
            throw new AdmissionException(AdmissionException.Kind.QUOTA, refusal);
        }
        Status fits = framework.everFits(fleet, request);
        if (!fits.isSuccess()) {
            throw new AdmissionException(AdmissionException.Kind.UNSCHEDULABLE, "unschedulable: " + fits.reason());
        }
        return milli;
    }

    /** An empty list admits every tenant; an entry ending in '*' admits every tenant with that prefix. */
    static boolean knownTenant(List<String> tenants, String tenant) {
        if (tenants.isEmpty()) {
            return true;
        }
        for (String t : tenants) {
            if (t.endsWith("*") ? tenant.startsWith(t.substring(0, t.length() - 1)) : t.equals(tenant)) {
                return true;
            }
        }
        return false;
    }

    public Uni<JobView> get(String jobId) {
        return sessions.withSession(s -> s.find(JobEntity.class, jobId).flatMap(job -> {
            if (job == null) {
                return Uni.createFrom().failure(new JobNotFoundException(jobId));
            }
            return view(s, job);
        }));
    }

    /** A page of jobs, newest first, after the (submittedAt, id) of the previous page's last job. */
    public Uni<List<JobView>> list(String tenant, List<JobState> states, int limit, Instant afterTime, String afterId) {
        StringBuilder hql = new StringBuilder("from JobEntity where 1 = 1");
        Map<String, Object> params = new HashMap<>();
        if (tenant != null && !tenant.isEmpty()) {
            hql.append(" and tenant = :tenant");
            params.put("tenant", tenant);
        }
        if (!states.isEmpty()) {
            hql.append(" and state in :states");
            params.put("states", states);
        }
        if (afterTime != null) {
            hql.append(" and (submittedAt < :at or (submittedAt = :at and id < :aid))");
            params.put("at", afterTime);
            params.put("aid", afterId);
        }
        hql.append(" order by submittedAt desc, id desc");
        return sessions.withSession(s -> {
            var query = s.createSelectionQuery(hql.toString(), JobEntity.class).setMaxResults(limit);
            params.forEach(query::setParameter);
            // One session runs one statement at a time: fetch every listed job's allocations at once.
            return query.getResultList().flatMap(jobs -> jobs.isEmpty() ? Uni.createFrom().item(List.<JobView>of())
                    : s.createSelectionQuery("from AllocationEntity where jobId in :ids order by rank",
                                    AllocationEntity.class)
                            .setParameter("ids", jobs.stream().map(j -> j.id).toList())
                            .getResultList()
                            .map(allocs -> jobs.stream().map(j -> viewOf(j, allocs.stream()
                                    .filter(a -> a.jobId.equals(j.id) && a.attempt == j.attempt).toList())).toList()));
        });
    }

    /** Cancels a job that has not ended and stops its workers; an ended job is returned as it is. */
    public Uni<JobView> cancel(String jobId, String reason) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        return operation(changes -> tx(s -> s.find(JobEntity.class, jobId).flatMap(job -> {
            if (job == null) {
                return Uni.createFrom().failure(new JobNotFoundException(jobId));
            }
            if (job.state.isFinal()) {
                return view(s, job);
            }
            return activeAllocations(s, job).flatMap(active -> {
                JobSpec spec = readableSpec(job); // cancelled all the same if unreadable: ending it needs no spec
                JobRow row = rows.rowOf(job, spec);
                return carryOut(s, changes, job, spec, row, JobCommands.cancel(row, reason, System.currentTimeMillis()),
                        active).flatMap(v -> view(s, job));
            });
        })));
    }

    // ---------------------------------------------------------------- events from the fleet

    /** A host's fresh description: it may have room for pending jobs. */
    public Uni<Void> hostReported(HostInventory inventory) {
        return operation(changes -> {
            boolean isNew = fleet.node(inventory.nodeId()).isEmpty();
            Instant now = Instant.now();
            Instant seen = inventory.observedAt().isAfter(now) ? now : inventory.observedAt();
            warnIfRdmaPortsDown(inventory);
            List<Assignment> displaced = fleet.upsert(inventory, seen.toEpochMilli());
            Heard early = heard.get(inventory.nodeId());
            if (early != null) { // telemetry that came before this inventory record: the host was alive then
                fleet.heard(inventory.nodeId(), early.at().toEpochMilli());
            }
            if (isNew) {
                LOG.infof("host %s joined: %d x %s, %s, fabric %s", inventory.nodeId(), inventory.gpus().size(),
                        inventory.gpus().isEmpty() ? "no GPU" : inventory.gpus().get(0).model(),
                        inventory.capacityType(), inventory.rdmaFabric());
            }
            refreshCapacity();
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
        return operation(changes -> {
            List<Assignment> lost = fleet.remove(nodeId);
            Set<String> foreign = reconciler.foreignHolds();
            lost = lost.stream().filter(a -> !foreign.contains(a.allocationId())).toList();
            reconciler.forgetHost(nodeId);
            refreshCapacity();
            LOG.infof("host %s left; %d allocation(s) on it are lost", nodeId, lost.size());
            return lose(changes, lost.stream().map(Assignment::allocationId).toList(), "host " + nodeId + " left");
        }).call(this::scheduleSoon);
    }

    private Uni<Void> lose(Changes changes, List<String> allocationIds, String why) {
        return inTurn(allocationIds, id -> declareLost(changes, id, why));
    }

    /**
     * Runs {@code step} for each item, one after another, without nesting one Uni in the next: a chain of a
     * thousand nested calls (a host-lost sweep over a big fleet) overflows the stack when subscribed.
     */
    private static <T> Uni<Void> inTurn(java.util.Collection<T> items, Function<T, Uni<Void>> step) {
        return io.smallrye.mutiny.Multi.createFrom().<T>iterable(items)
                .onItem().transformToUniAndConcatenate(item -> step.apply(item))
                .collect().asList().replaceWithVoid();
    }

    /**
     * A host's agent reported telemetry at {@code at}: the host is alive, and (unless {@code running} is
     * null) runs exactly those allocations. Called for every telemetry record, so it only notes them; the
     * cluster model takes them in before it is next read.
     */
    public void heardFrom(String nodeId, Instant at, List<AllocationReport> running) {
        heard.merge(nodeId, new Heard(at, running), (a, b) -> a.at().isAfter(b.at()) ? a : b);
    }

    /** A host was heard at {@code at}, saying nothing of what it runs. */
    public void heardFrom(String nodeId, Instant at) {
        heardFrom(nodeId, at, null);
    }

    private void applyLiveness() {
        long forgetBefore = System.currentTimeMillis() - config.hostLostTimeout().toMillis();
        for (String nodeId : List.copyOf(heard.keySet())) {
            Heard h = heard.get(nodeId);
            if (h == null) {
                continue;
            }
            if (fleet.node(nodeId).isEmpty()) {
                // heard before its inventory was read (after a start, gpu.inventory is read from its beginning
                // while telemetry flows): kept until the host is known, or that word of life would be lost;
                // a key no inventory names within host-lost-timeout is forgotten, so stray keys cannot pile up
                if (h.at().toEpochMilli() < forgetBefore) {
                    heard.remove(nodeId, h);
                }
                continue;
            }
            heard.remove(nodeId, h); // a newer word that came meanwhile stays for the next time
            fleet.heard(nodeId, h.at().toEpochMilli());
            if (h.running() != null) {
                reconciler.report(nodeId, h.at().toEpochMilli(), h.running());
            }
        }
    }

    /** A drain (or undrain) from node.events: no new work lands on a draining host. */
    public Uni<Void> setDraining(String nodeId, boolean draining) {
        return operation(changes -> {
            fleet.drain(nodeId, draining);
            LOG.infof("host %s %s", nodeId, draining ? "drains" : "accepts work again");
            return Uni.createFrom().voidItem();
        }).call(this::scheduleSoon);
    }

    /**
     * Spot notices, rebalance advice, GPU faults, lost heartbeats, drains: the fleet takes the event in as
     * scheduler-core's {@link NodeEvents} rules say, and the work they move off the host is asked to
     * checkpoint (and then stop) or is lost.
     */
    public Uni<Void> nodeEvent(NodeEvent event) {
        return operation(changes -> {
            NodeEvents.Outcome o = NodeEvents.apply(fleet, spot, event, System.currentTimeMillis(), nodeRules);
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
        return tx(s -> inTurn(jobs, jobId -> s.find(JobEntity.class, jobId).flatMap(job -> job == null
                ? Uni.createFrom().voidItem() : requestCheckpoint(s, changes, job, deadlineMillis, why, null))));
    }

    /**
     * Asks a placed job to checkpoint by the deadline and then stop ({@link JobCommands#askToCheckpoint}); it
     * is stopped and requeued once it reports the checkpoint, or at the deadline.
     */
    private Uni<Void> requestCheckpoint(Mutiny.Session s, Changes changes, JobEntity job, long deadlineMillis,
            String why, String preemptor) {
        if (!GangSettlement.placed(job.state)) {
            return Uni.createFrom().voidItem();
        }
        JobSpec spec = specOf(job);
        return activeAllocations(s, job).flatMap(active -> {
            JobRow row = rows.rowOf(job, spec);
            return carryOut(s, changes, job, spec, row,
                    JobCommands.askToCheckpoint(row, deadlineMillis, why, preemptor, System.currentTimeMillis()), active);
        });
    }

    /** Stops a job's workers and puts it back in the queue to resume from its latest checkpoint. */
    private Uni<Void> stopAndRequeue(Mutiny.Session s, Changes changes, JobEntity job, JobSpec spec,
            List<AllocationEntity> active, String why) {
        JobRow row = rows.rowOf(job, spec);
        return carryOut(s, changes, job, spec, row, JobCommands.interrupt(row, why, System.currentTimeMillis()),
                active);
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
        Uni<Map<Integer, Throwable>> together = operation(changes -> tx(s -> {
            Uni<Void> chain = preload(s, events);
            for (AllocationEvent event : events) {
                chain = chain.call(() -> applyAllocationEvent(s, changes, event));
            }
            return chain.eventually(() -> preloaded = null);
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
                chain = chain.call(() -> operation(changes -> tx(
                                s -> applyAllocationEvent(s, changes, events.get(index))))
                        .onFailure().invoke(e -> failed.put(index, e))
                        .onFailure().recoverWithNull());
            }
            return chain.replaceWith(failed);
        }).call(this::scheduleSoon);
    }

    /**
     * Loads, in three queries, every allocation and job a batch of events touches and all those jobs'
     * allocations, into the session (so each event's lookups are answered from it, not by a round trip
     * each) and into {@link #preloaded} for {@link #allocationsOf} until the batch's transaction ends.
     */
    private Uni<Void> preload(Mutiny.Session s, List<AllocationEvent> events) {
        List<String> jobIds = events.stream().map(AllocationEvent::jobId).distinct().toList();
        return s.createSelectionQuery("from JobEntity where id in :ids", JobEntity.class).setParameter("ids", jobIds)
                .getResultList()
                .chain(jobs -> s.createSelectionQuery("from AllocationEntity where jobId in :ids", AllocationEntity.class)
                        .setParameter("ids", jobIds).getResultList())
                .invoke(allocs -> {
                    Map<String, List<AllocationEntity>> byJob = new HashMap<>();
                    jobIds.forEach(id -> byJob.put(id, new ArrayList<>()));
                    allocs.forEach(a -> byJob.get(a.jobId).add(a));
                    byJob.values().forEach(list -> list.sort(java.util.Comparator.comparingInt(a -> a.rank)));
                    preloaded = byJob;
                })
                .replaceWithVoid();
    }

    private Uni<Void> applyAllocationEvent(Mutiny.Session s, Changes changes, AllocationEvent event) {
        return switch (event.type()) {
            case STARTED -> s.find(AllocationEntity.class, event.allocationId()).flatMap(a -> {
                if (a == null || !a.isActive()) {
                    return Uni.createFrom().voidItem();
                }
                if (AllocationEntity.RUNNING.equals(a.state)) { // a repeat
                    return s.find(JobEntity.class, a.jobId).invoke(job -> changes.allocation(
                            allocationRecord(a, job == null ? "" : job.tenant))).replaceWithVoid();
                }
                a.state = AllocationEntity.RUNNING;
                a.startedAt = event.occurredAt();
                if (a.migProfile != null && event.migInstanceUuid() != null) {
                    a.migUuid = event.migInstanceUuid();
                }
                LOG.infof("%s worker %d started on %s%s", a.jobId, a.rank, a.nodeId,
                        a.migUuid == null ? "" : " (MIG " + a.migProfile + "@" + a.migStart + " = " + a.migUuid + ")");
                return s.find(JobEntity.class, a.jobId)
                        .invoke(job -> changes.allocation(allocationRecord(a, job == null ? "" : job.tenant)))
                        .chain(() -> settleJob(s, changes, a.jobId));
            });
            case CHECKPOINT_SAVED -> checkpointSaved(s, changes, event);
            case EXITED -> allocationEnded(s, changes, event.allocationId(), AllocationEntity.EXITED, event.exitCode(),
                    event.detail());
            case LOST -> {
                if (event.startBy() != null) {
                    yield startAgain(s, event);
                }
                if (!event.heldBy().isEmpty()) { // its host refused its START: others hold its GPUs there
                    fleet.assignment(event.allocationId()).ifPresent(a -> changes.busy.add(
                            new Busy(a, event.occurredAt().toEpochMilli(), event.heldBy())));
                }
                yield allocationEnded(s, changes, event.allocationId(), AllocationEntity.LOST, null, event.detail());
            }
        };
    }

    /**
     * Its host got the START after its start-by time and did not start it. Should this scheduler still hold the
     * allocation (it has not counted it lost: it could not hear the host meanwhile, or the START waited in the
     * broker), it sends the START again with a new start-by time, so a late command costs the job no attempt.
     * One it lost already (or that started meanwhile) is left as it is. A START whose new start-by time would
     * have passed already is not sent: the host is silent, and liveness decides.
     */
    private Uni<Void> startAgain(Mutiny.Session s, AllocationEvent event) {
        return s.find(AllocationEntity.class, event.allocationId()).flatMap(a -> {
            if (a == null || !AllocationEntity.STARTING.equals(a.state)) {
                return Uni.createFrom().voidItem();
            }
            return s.find(JobEntity.class, a.jobId).flatMap(job -> {
                if (job == null || job.attempt != a.attempt || !GangSettlement.placed(job.state)) {
                    return Uni.createFrom().voidItem();
                }
                JobSpec spec = specOf(job);
                return allocationsOf(s, job).flatMap(allocs -> {
                    AllocationEntity rank0 = allocs.stream().filter(w -> w.rank == 0).findFirst().orElse(a);
                    long now = System.currentTimeMillis();
                    NodeCommand start = startCommand(job, spec, a, masterOf(rank0), a.id + "/start-" + now);
                    if (start.deadline() != null && start.deadline().toEpochMilli() <= now) {
                        LOG.infof("%s came to %s after its start-by time; the host is silent since, so it is not sent"
                                + " again", a.id, a.nodeId);
                        return Uni.createFrom().voidItem();
                    }
                    LOG.infof("%s came to %s after its start-by time %s, and this scheduler still holds it: sending its"
                            + " START again, to start by %s", a.id, a.nodeId, event.startBy(), start.deadline());
                    return command(s, a.nodeId, start);
                });
            });
        });
    }

    /**
     * A worker saved a checkpoint. A single worker's checkpoint counts at once; a gang's counts when
     * every worker of the current attempt has reported the same path (each saves its shard there), so
     * a gang never resumes from a checkpoint some of its workers did not finish.
     */
    private Uni<Void> checkpointSaved(Mutiny.Session s, Changes changes, AllocationEvent event) {
        if (event.checkpointPath() == null || event.checkpointPath().isBlank()) {
            LOG.warnf("%s reported a checkpoint without a path; ignored", event.allocationId());
            return Uni.createFrom().voidItem();
        }
        return s.find(JobEntity.class, event.jobId()).flatMap(job -> {
            if (job == null || job.state.isFinal()) {
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = specOf(job);
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
                                    + " (select a.id from AllocationEntity a where a.jobId = :job and a.attempt = :attempt)",
                                    Long.class)
                            .setParameter("job", job.id).setParameter("path", event.checkpointPath())
                            .setParameter("attempt", job.attempt).getSingleResult())
                    .flatMap(workersSaved -> {
                        if (workersSaved < spec.workers()) {
                            LOG.infof("%s: %d of %d workers saved the checkpoint at %s", job.id, workersSaved,
                                    spec.workers(), event.checkpointPath());
                            return Uni.createFrom().voidItem();
                        }
                        return checkpointComplete(s, changes, job, spec, event, workersSaved.intValue());
                    });
        });
    }

    private Uni<Void> checkpointComplete(Mutiny.Session s, Changes changes, JobEntity job, JobSpec spec,
            AllocationEvent event, int workersSaved) {
        return s.find(CheckpointEntity.class, checkpointKey(job.id, event.checkpointPath())).flatMap(seen -> {
            Uni<Void> record = Uni.createFrom().voidItem();
            if (seen == null) {
                CheckpointEntity c = new CheckpointEntity();
                c.jobId = job.id;
                c.path = event.checkpointPath();
                c.allocationId = event.allocationId();
                c.savedAt = event.occurredAt();
                record = s.persist(c);
            }
            LOG.infof("%s saved a checkpoint at %s%s", job.id, event.checkpointPath(),
                    spec.workers() > 1 ? " (all " + spec.workers() + " workers)" : "");
            return record.call(() -> activeAllocations(s, job).flatMap(active -> {
                JobRow row = rows.rowOf(job, spec);
                return carryOut(s, changes, job, spec, row, JobCommands.checkpointSaved(row, event.checkpointPath(),
                        event.occurredAt().toEpochMilli(), workersSaved, System.currentTimeMillis()), active);
            }));
        });
    }

    private static CheckpointEntity.Key checkpointKey(String jobId, String path) {
        CheckpointEntity.Key k = new CheckpointEntity.Key();
        k.jobId = jobId;
        k.path = path;
        return k;
    }

    /** How the scheduling passes go, for readiness: when one last completed, what waited, the last failure. */
    public record PassProgress(long lastCompletedMillis, int pendingJobs, String lastFailure) {
    }

    public PassProgress passProgress() {
        return new PassProgress(lastPassCompletedMillis, pendingJobs, lastPassFailure);
    }

    /** A consistent copy of the cluster model, taken between operations. */
    public Uni<ClusterSnapshot> cluster() {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader()); // a standby does not know what is held
        }
        return serial.run(() -> {
            applyLiveness();
            return Uni.createFrom().item(ClusterSnapshot.of(fleet, System.currentTimeMillis(),
                    config.hostTimeout().toMillis()));
        });
    }

    // ---------------------------------------------------------------- internals

    /**
     * Loses an allocation on this scheduler's own evidence (its host silent past the timeout, a lost heartbeat,
     * the host gone or its GPUs changed). Its host is told to stop it: should the host still run it, or get its
     * START late, it does not keep GPUs that the scheduler now counts free. The STOP follows the START on the
     * host's partition of node.commands, so a late START is undone, never left running.
     */
    private Uni<Void> declareLost(Changes changes, String allocationId, String why) {
        return tx(s -> s.find(AllocationEntity.class, allocationId).flatMap(a -> {
            if (a == null || !a.isActive()) {
                return Uni.createFrom().voidItem();
            }
            return s.find(JobEntity.class, a.jobId)
                    .call(job -> command(s, a.nodeId, stopCommand(a, job == null ? "" : job.tenant, why)))
                    .chain(() -> allocationEnded(s, changes, allocationId, AllocationEntity.LOST, null, why));
        }));
    }

    private Uni<Void> allocationEnded(Mutiny.Session s, Changes changes, String allocationId, String endState,
            Integer exitCode, String detail) {
        return s.find(AllocationEntity.class, allocationId).flatMap(a -> {
            if (a == null || !a.isActive()) {
                return Uni.createFrom().voidItem();
            }
            a.state = endState;
            a.exitCode = exitCode;
            a.endedAt = Instant.now();
            changes.allocation(new AllocationRecord.Released(a.id));
            LOG.infof("%s worker %d on %s %s%s", a.jobId, a.rank, a.nodeId,
                    endState.equals(AllocationEntity.LOST) ? "was lost" : "exited " + exitCode,
                    detail == null || detail.isBlank() ? "" : " (" + detail + ")");
            return settleJob(s, changes, a.jobId);
        });
    }

    /**
     * Moves a placed job on from its current attempt's allocations, as scheduler-core's
     * {@link GangSettlement} decides: a lost worker requeues the whole gang; a failed exit retries (by
     * exit code, within the bound) or fails it; all exited 0 succeeds it; all started runs it. A job
     * already requeued or ended ignores its old workers' exits.
     */
    private Uni<Void> settleJob(Mutiny.Session s, Changes changes, String jobId) {
        return s.find(JobEntity.class, jobId).flatMap(job -> allocationsOf(s, job).flatMap(allocs -> {
            if (!GangSettlement.placed(job.state)) {
                return Uni.createFrom().voidItem(); // its spec need not be read (an ended job's may be unreadable)
            }
            JobSpec spec = specOf(job);
            JobRow row = rows.rowOf(job, spec);
            return carryOut(s, changes, job, spec, row, JobCommands.settle(row,
                    allocs.stream().map(JobRows::outcomeOf).toList(), System.currentTimeMillis()), allocs);
        }));
    }

    /**
     * One scheduling pass: lost hosts and overdue checkpoints first, then the queue. What the pass
     * reserved is persisted in one transaction (allocations, START and CHECKPOINT commands, events,
     * reasons); if that fails, the reservations are undone and the jobs go back in line.
     */
    private Uni<Void> schedulePending() {
        applyLiveness();
        long now = System.currentTimeMillis();
        Changes sweep = new Changes();
        return reconcile(sweep, now)
                .call(() -> sweepLostHosts(sweep, now))
                .call(() -> expireCheckpoints(sweep, now))
                .invoke(() -> sweep.applyTo(this))
                .chain(() -> runPass(now));
    }

    /**
     * Holds the GPUs of allocations that agents run and this scheduler does not, gives them back once
     * the agents stop reporting them, and sends what the reconciler asks: a STOP for an allocation that
     * is not the scheduler's, a STATUS for one of its own that its host no longer reports (the agent
     * answers with its STARTED, EXITED or LOST). An allocation its host reports running counts as
     * started, should its STARTED event have been missed.
     */
    private Uni<Void> reconcile(Changes changes, long now) {
        AllocationReconciler.Plan plan = reconciler.reconcile(fleet, state::started, now,
                config.hostTimeout().toMillis());
        if (plan.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        for (Assignment hold : plan.hold()) {
            fleet.reserve(hold);
            LOG.warnf("host %s runs %s (job %s of %s) on GPUs %s, which this scheduler does not run: holding them",
                    hold.nodeId(), hold.allocationId(), hold.jobId(), hold.tenant(), hold.gpuIndices());
        }
        for (String id : plan.release()) {
            fleet.unreserve(id).ifPresent(a -> LOG.infof("host %s no longer runs %s: its GPUs %s are free again",
                    a.nodeId(), id, a.gpuIndices()));
        }
        plan.conflicts().forEach(c -> LOG.errorf("GPU held twice: %s", c));
        if (plan.asks().isEmpty() && plan.running().isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return tx(s -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (AllocationReconciler.Ask ask : plan.asks()) {
                NodeCommandType type = ask.unknown() ? NodeCommandType.STOP : NodeCommandType.STATUS;
                LOG.warnf("%s %s on %s: %s", ask.unknown() ? "stopping" : "asking about", ask.allocationId(),
                        ask.nodeId(), ask.reason());
                NodeCommand cmd = new NodeCommand(ask.allocationId() + "/" + type.name().toLowerCase() + "-" + now, type,
                        ask.nodeId(), ask.allocationId(), ask.jobId(), ask.tenant(), ask.gpuIndices(), null, 0, 0, 0,
                        null, List.of(), Map.of(), null, null, null, Instant.ofEpochMilli(now), ask.reason());
                chain = chain.call(() -> command(s, ask.nodeId(), cmd));
            }
            for (AllocationReport r : plan.running()) {
                Assignment a = fleet.assignment(r.allocationId()).orElse(null);
                if (a == null) {
                    continue;
                }
                AllocationEvent start = new AllocationEvent(r.allocationId(), a.jobId(), a.nodeId(),
                        dev.gpucloud.contracts.events.AllocationEventType.STARTED, Instant.ofEpochMilli(now), null, null,
                        "reported running by its host", r.migInstanceUuid());
                chain = chain.call(() -> applyAllocationEvent(s, changes, start));
            }
            return chain;
        });
    }

    private Uni<Void> sweepLostHosts(Changes changes, long now) {
        boolean wasDeaf = liveness.deaf();
        Map<String, String> lost = liveness.lost(fleet, now, reconciler.foreignHolds());
        if (liveness.deaf() != wasDeaf) {
            if (liveness.deaf()) {
                LOG.warnf("most hosts are silent at once: taking it for this scheduler not hearing them (the broker or"
                        + " the network to it), not for hosts lost; nothing is lost for silence until hosts are heard"
                        + " again");
            } else {
                LOG.infof("hosts are heard again; a host's silence counts from %s",
                        Instant.ofEpochMilli(liveness.listeningSinceMillis()));
            }
        }
        return inTurn(lost.entrySet(), e -> declareLost(changes, e.getKey(), e.getValue()));
    }

    private Uni<Void> expireCheckpoints(Changes changes, long now) {
        List<String> overdue = state.overdue(now);
        if (overdue.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return tx(s -> inTurn(overdue, jobId -> s.find(JobEntity.class, jobId).flatMap(job -> {
            if (job == null) {
                changes.job(new JobRecord.Ended(jobId));
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = job.state.isFinal() ? readableSpec(job) : specOf(job);
            return activeAllocations(s, job).flatMap(active -> {
                JobRow row = rows.rowOf(job, spec);
                return carryOut(s, changes, job, spec, row, JobCommands.stopOverdue(row, now), active);
            });
        })));
    }

    private Uni<Void> runPass(long now) {
        if (state.queue().size() == 0) {
            return Uni.createFrom().voidItem();
        }
        PassResult result = pass.run(fleet, state.queue(), state.running(), state.preempting(), now);
        Changes changes = new Changes();
        Set<String> ids = new HashSet<>();
        result.placed().forEach(p -> ids.add(p.job().jobId()));
        ids.addAll(result.unresolvable().keySet());
        result.preemptions().forEach(p -> p.victims().forEach(v -> ids.add(v.jobId())));
        Uni<Void> persisted = tx(s -> {
            Uni<Map<String, JobEntity>> load = ids.isEmpty() ? Uni.createFrom().item(Map.of())
                    : s.createSelectionQuery("from JobEntity where id in :ids", JobEntity.class)
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
                    chain = chain.call(() -> bind(s, changes, job, p));
                }
                for (var e : result.unresolvable().entrySet()) {
                    JobEntity job = jobs.get(e.getKey());
                    chain = chain.call(() -> {
                        JobSpec spec = readableSpec(job);
                        JobRow row = rows.rowOf(job, spec);
                        return carryOut(s, changes, job, spec, row,
                                JobCommands.fail(row, "unschedulable: " + e.getValue(), now), List.of());
                    });
                }
                for (PassResult.Preemption p : result.preemptions()) {
                    for (RunningJob victim : p.victims()) {
                        JobEntity job = jobs.get(victim.jobId());
                        chain = chain.call(() -> requestCheckpoint(s, changes, job,
                                now + config.preemptionGrace().toMillis(),
                                "preempted by " + p.preemptor().jobId() + " (" + p.preemptor().priority() + ")",
                                p.preemptor().jobId()));
                    }
                }
                for (var e : result.waiting().entrySet()) {
                    String reason = JobCommands.pendingReason(e.getValue(), requeueNotes.get(e.getKey()));
                    if (!reason.equals(lastReason.get(e.getKey()))) {
                        changes.reasons.put(e.getKey(), reason);
                        chain = chain.call(() -> s.createMutationQuery(
                                        "update JobEntity set reason = :r, updatedAt = :t where id = :id and state = :p")
                                .setParameter("r", reason).setParameter("t", Instant.ofEpochMilli(now))
                                .setParameter("id", e.getKey()).setParameter("p", JobState.PENDING)
                                .executeUpdate().replaceWithVoid());
                    }
                }
                return chain;
            });
        });
        return persisted
                .invoke(() -> {
                    changes.applyTo(this);
                    changes.events.forEach(watchers::publish);
                })
                .onFailure().recoverWithUni(f -> {
                    if (notNow(f) || result.placed().size() + result.unresolvable().size() == 0) {
                        for (PassResult.Placed p : result.placed()) {
                            p.decision().assignments().forEach(a -> fleet.unreserve(a.allocationId()));
                            state.queue().enqueue(p.job());
                        }
                        return Uni.createFrom().failure(f);
                    }
                    LOG.warnf("a scheduling pass could not be stored (%s); storing its %d placed and %d unresolvable job(s)"
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
            chain = chain.call(() -> alone(jobId, (s, c, job) -> bind(s, c, job, p), () -> {
                p.decision().assignments().forEach(a -> fleet.unreserve(a.allocationId()));
                return p.job();
            }));
        }
        for (var e : result.unresolvable().entrySet()) {
            chain = chain.call(() -> alone(e.getKey(), (s, c, job) -> {
                JobSpec spec = readableSpec(job);
                JobRow row = rows.rowOf(job, spec);
                return carryOut(s, c, job, spec, row, JobCommands.fail(row, "unschedulable: " + e.getValue(), now),
                        List.of());
            }, () -> null));
        }
        return chain;
    }

    /** What to do with one job inside its own transaction. */
    @FunctionalInterface
    private interface JobStep {
        Uni<Void> apply(Mutiny.Session s, Changes changes, JobEntity job);
    }

    /**
     * Runs {@code step} for one job in a transaction of its own. On failure {@code undo} gives back what the
     * pass reserved and returns the queue entry to put back (or null); a transient failure puts it back, any
     * other fails the job.
     */
    private Uni<Void> alone(String jobId, JobStep step, java.util.function.Supplier<QueuedJob> undo) {
        Changes c = new Changes();
        return tx(s -> s.find(JobEntity.class, jobId)
                        .flatMap(job -> job == null ? Uni.createFrom().voidItem() : step.apply(s, c, job)))
                .invoke(() -> {
                    c.applyTo(this);
                    c.events.forEach(watchers::publish);
                })
                .onFailure().recoverWithUni(f -> {
                    QueuedJob back = undo.get();
                    if (notNow(f)) {
                        if (back != null) {
                            state.queue().enqueue(back);
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
    private Uni<Void> failJob(String jobId, String reason, QueuedJob queued) {
        String why = DatabaseFailures.printable(reason);
        LOG.errorf("%s FAILED: %s", jobId, why);
        Changes c = new Changes();
        return tx(s -> s.find(JobEntity.class, jobId).flatMap(job -> {
                    if (job == null || job.state.isFinal()) {
                        return Uni.createFrom().voidItem();
                    }
                    JobSpec spec = readableSpec(job);
                    return activeAllocations(s, job).flatMap(active -> {
                        JobRow row = rows.rowOf(job, spec);
                        return carryOut(s, c, job, spec, row, JobCommands.fail(row, why, System.currentTimeMillis()),
                                active);
                    });
                }))
                .invoke(() -> {
                    c.applyTo(this);
                    c.events.forEach(watchers::publish);
                })
                .onFailure().recoverWithItem(f -> {
                    if (queued != null && notNow(f)) {
                        // the database went away meanwhile: the job is not at fault yet; it waits for the next pass
                        LOG.warnf("could not fail %s now (%s); it stays queued", jobId, DatabaseFailures.clip(f));
                        state.queue().enqueue(queued);
                        return null;
                    }
                    LOG.errorf("could not even fail %s (%s); it leaves the queue until the scheduler restarts", jobId,
                            DatabaseFailures.clip(f));
                    state.replay(new JobRecord.Ended(jobId)); // in memory only: the row is retried at the next start
                    return null;
                });
    }

    /** Persists one placed job: its allocations, START commands and its SCHEDULED event. */
    private Uni<Void> bind(Mutiny.Session s, Changes changes, JobEntity job, PassResult.Placed placed) {
        JobSpec spec = specOf(job);
        List<Assignment> assignments = placed.decision().assignments();
        String where = assignments.stream().map(a -> a.nodeId() + " " + describe(a)).distinct()
                .reduce((x, y) -> x + ", " + y).orElse("");
        JobRow placedRow = rows.rowOf(job, spec);
        JobCommands.placed(placedRow, where, placed.backfilled());
        store(placedRow, job);
        job.capacity = placed.job().request().capacity() == spec.capacity() ? null : placed.job().request().capacity();
        List<AllocationEntity> rows = new ArrayList<>();
        Instant now = Instant.now();
        for (Assignment a : assignments) {
            AllocationEntity row = new AllocationEntity();
            row.id = a.allocationId();
            row.jobId = job.id;
            row.attempt = job.attempt;
            row.rank = a.rank();
            row.nodeId = a.nodeId();
            row.gpuIndices = AllocationEntity.encodeGpus(a.gpuIndices());
            row.migProfile = a.migProfile();
            row.migStart = a.migStart();
            row.milliGpu = a.milliGpu();
            row.cpuMillis = a.cpuMillis();
            row.memoryMib = a.memoryMib();
            row.state = AllocationEntity.STARTING;
            row.createdAt = now;
            rows.add(row);
        }
        rows.forEach(row -> changes.allocation(allocationRecord(row, job.tenant)));
        LOG.infof("placed %s of tenant %s (attempt %d): %s", job.id, job.tenant, job.attempt, where);
        String master = masterOf(rows.get(0));
        Uni<Void> chain = s.persistAll(rows.toArray());
        for (AllocationEntity a : rows) {
            chain = chain.call(() -> command(s, a.nodeId, startCommand(job, spec, a, master, a.id + "/start")));
        }
        return chain.call(() -> announce(s, changes, job, spec, rows));
    }

    private static String describe(Assignment a) {
        if (a.isMig()) {
            return "GPU " + a.gpuIndices().get(0) + " MIG " + a.migProfile() + "@" + a.migStart();
        }
        if (a.isFraction()) {
            return "GPU " + a.gpuIndices().get(0) + " (" + a.milliGpu() + " milli)";
        }
        return "GPUs [" + AllocationEntity.encodeGpus(a.gpuIndices()) + "]";
    }

    private String checkpointDir(JobEntity job, JobSpec spec) {
        return spec.checkpoint().location() != null ? spec.checkpoint().location() + "/" + job.id
                : config.defaultCheckpointRoot() + "/" + job.id;
    }

    /** Where a gang's workers meet: rank 0's host. */
    private String masterOf(AllocationEntity rank0) {
        return fleet.node(rank0.nodeId).map(NodeState::hostname).orElse(rank0.nodeId) + ":29500";
    }

    private NodeCommand startCommand(JobEntity job, JobSpec spec, AllocationEntity a, String master, String commandId) {
        String migUuid = a.migProfile == null ? null : a.migProfile + "@" + a.migStart;
        // the host starts it by then or not at all (StartDeadline): after it, this scheduler may have lost it
        Instant startBy = fleet.node(a.nodeId).map(n -> Instant.ofEpochMilli(liveness.startByMillis(n))).orElse(null);
        return new NodeCommand(commandId, NodeCommandType.START, a.nodeId, a.id, job.id, job.tenant, a.gpus(),
                migUuid, a.migProfile == null && a.milliGpu < 1000 ? a.milliGpu : 0, a.rank, spec.workers(), master,
                spec.command(), spec.env(), checkpointDir(job, spec), job.resumeFrom, startBy, Instant.now());
    }

    private Uni<Void> stopAll(Mutiny.Session s, JobEntity job, List<AllocationEntity> active) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (AllocationEntity a : active) {
            chain = chain.call(() -> command(s, a.nodeId, stopCommand(a, job.tenant, null)));
        }
        return chain;
    }

    private static NodeCommand stopCommand(AllocationEntity a, String tenant, String reason) {
        return new NodeCommand(a.id + "/stop", NodeCommandType.STOP, a.nodeId, a.id, a.jobId, tenant, a.gpus(), null, 0,
                a.rank, 0, null, List.of(), Map.of(), null, null, null, Instant.now(), reason);
    }

    /**
     * A job's row changed: its event goes to the outbox, and its record (where it stands now) to the
     * operation's changes, to be replayed into memory once the transaction commits. {@code allocs} are its
     * current attempt's allocations (those that held GPUs are named in the event); {@code spec} may be null
     * only for an ended job.
     */
    private Uni<Void> announce(Mutiny.Session s, Changes changes, JobEntity job, JobSpec spec,
            List<AllocationEntity> allocs) {
        changes.job(rows.jobRecord(job, spec, allocs));
        JobEvent event = new JobEvent(job.id, job.tenant, job.state, job.reason, job.updatedAt,
                placementOf(allocs), job.resumeFrom);
        changes.events.add(event);
        return outbox.add(s, Topics.JOB_EVENTS, job.id, event);
    }

    // ---------------------------------------------------------------- job state <-> rows

    /**
     * Carries out what a rule decided for a job: stores its row, sends its workers (those of {@code allocs}
     * that hold GPUs) STOP or CHECKPOINT, and publishes its event or only replays its record. {@code spec} may
     * be null only for a job that has ended.
     */
    private Uni<Void> carryOut(Mutiny.Session s, Changes changes, JobEntity job, JobSpec spec, JobRow row,
            JobCommands.Outcome outcome, List<AllocationEntity> allocs) {
        if (!outcome.changed()) {
            return Uni.createFrom().voidItem();
        }
        store(row, job);
        if (outcome.note() != null) {
            changes.notes.put(job.id, outcome.note());
        }
        List<AllocationEntity> active = allocs.stream().filter(AllocationEntity::isActive).toList();
        Uni<Void> chain = Uni.createFrom().voidItem();
        if (outcome.stopWorkers()) {
            chain = stopAll(s, job, active);
        }
        if (outcome.checkpointBy() > 0) {
            for (AllocationEntity a : active) {
                NodeCommand cmd = new NodeCommand(a.id + "/checkpoint-" + job.attempt + "-" + outcome.checkpointBy(),
                        NodeCommandType.CHECKPOINT, a.nodeId, a.id, job.id, job.tenant, a.gpus(), null, 0, a.rank, 0,
                        null, List.of(), Map.of(), checkpointDir(job, spec), job.resumeFrom,
                        Instant.ofEpochMilli(outcome.checkpointBy()), Instant.now());
                chain = chain.call(() -> command(s, a.nodeId, cmd));
            }
        }
        if (outcome.effect() == JobCommands.Effect.STORE) {
            return chain.invoke(() -> changes.job(rows.jobRecord(job, spec, allocs)));
        }
        LOG.infof("%s of tenant %s is %s: %s", job.id, job.tenant, job.state, job.reason);
        return chain.call(() -> announce(s, changes, job, spec, job.state == JobState.PENDING ? List.of() : allocs));
    }

    private void refreshCapacity() {
        long milli = 0;
        long cpu = 0;
        for (NodeState n : fleet.nodes()) {
            milli += 1000L * n.gpuCount();
            cpu += n.cpuMillis();
        }
        state.queue().setClusterCapacity(milli, cpu);
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * Runs one operation through the serial executor; after it commits, applies its effects on
     * memory, tells watchers, and publishes the outbox.
     */
    private <T> Uni<T> operation(Function<Changes, Uni<T>> body) {
        Changes changes = new Changes();
        return serial.run(() -> body.apply(changes).invoke(() -> changes.applyTo(this)))
                .invoke(() -> {
                    changes.events.forEach(watchers::publish);
                    publishOutbox();
                });
    }

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
                    return schedulePending().invoke(() -> {
                        lastPassCompletedMillis = System.currentTimeMillis();
                        lastPassFailure = null;
                        pendingJobs = state.queue().size();
                    });
                }).invoke(this::publishOutbox)
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

    private void publishOutbox() {
        if (leader.leads()) {
            outbox.kick();
        }
    }

    /**
     * A batch's jobs and all their allocations, loaded up front (see {@link #preload}); null outside a
     * batch of allocation events. Only the serial executor's current operation reads or writes it.
     */
    private Map<String, List<AllocationEntity>> preloaded;

    private Uni<List<AllocationEntity>> allocationsOf(Mutiny.Session s, JobEntity job) {
        Map<String, List<AllocationEntity>> batch = preloaded;
        if (batch != null && batch.containsKey(job.id)) {
            return Uni.createFrom().item(batch.get(job.id).stream().filter(a -> a.attempt == job.attempt).toList());
        }
        return s.createSelectionQuery("from AllocationEntity where jobId = :j and attempt = :a order by rank",
                        AllocationEntity.class)
                .setParameter("j", job.id).setParameter("a", job.attempt).getResultList();
    }

    private Uni<List<AllocationEntity>> activeAllocations(Mutiny.Session s, JobEntity job) {
        return allocationsOf(s, job).map(all -> all.stream().filter(AllocationEntity::isActive).toList());
    }

    private Uni<JobView> view(Mutiny.Session s, JobEntity job) {
        return allocationsOf(s, job).map(allocs -> viewOf(job, allocs));
    }

    /**
     * What one operation changed: the records of the rows it wrote (the last one per job and allocation
     * stands), replayed into memory once its transaction commits, with the events to tell watchers and the
     * pending reasons and requeue notes (text for the API, not state).
     */
    /** A START its host refused at {@code atMillis} because {@code heldBy} hold the GPUs it was placed on. */
    private record Busy(Assignment refused, long atMillis, List<String> heldBy) {
    }

    private static final class Changes {
        final List<JobEvent> events = new ArrayList<>();
        final List<Busy> busy = new ArrayList<>();
        final Map<String, JobRecord> jobs = new LinkedHashMap<>();
        final Map<String, AllocationRecord> allocations = new LinkedHashMap<>();
        final Map<String, String> reasons = new HashMap<>();
        final Map<String, String> notes = new HashMap<>();

        void job(JobRecord record) {
            jobs.put(record.jobId(), record);
        }

        void allocation(AllocationRecord record) {
            allocations.put(record.allocationId(), record);
        }

        void applyTo(SchedulerEngine e) {
            long now = System.currentTimeMillis();
            for (AllocationRecord a : allocations.values()) {
                e.state.replay(a);
                if (a instanceof AllocationRecord.Released) {
                    e.reconciler.ended(a.allocationId(), now);
                }
            }
            for (Busy b : busy) { // after the refused allocations gave their GPUs back
                for (Assignment hold : e.reconciler.busy(e.fleet, b.refused(), b.atMillis(), b.heldBy())) {
                    e.fleet.reserve(hold);
                    LOG.warnf("host %s refused %s: %s still runs on GPUs %s, which this scheduler counted free: holding"
                            + " them until the host says it no longer runs it", hold.nodeId(),
                            b.refused().allocationId(), hold.allocationId(), hold.gpuIndices());
                }
            }
            for (JobRecord j : jobs.values()) {
                e.state.replay(j);
                if (!(j instanceof JobRecord.Queued)) {
                    e.lastReason.remove(j.jobId());
                    e.requeueNotes.remove(j.jobId());
                }
            }
            e.lastReason.putAll(reasons);
            e.requeueNotes.putAll(notes);
        }
    }
}
