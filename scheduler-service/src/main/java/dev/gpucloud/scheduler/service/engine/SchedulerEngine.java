package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.scheduler.cluster.Allocation;
import dev.gpucloud.scheduler.cluster.ClusterState;
import dev.gpucloud.scheduler.lifecycle.JobLifecycle;
import dev.gpucloud.scheduler.placement.FirstFitPlacer;
import dev.gpucloud.scheduler.placement.Placement;
import dev.gpucloud.scheduler.placement.WorkerSlot;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.persistence.AllocationEntity;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * Drives jobs: accepts them, places pending ones on the cluster, turns placements into node
 * commands, and follows allocation events to the job's end. Every operation runs through the
 * {@link SerialExecutor} as one database transaction; records it publishes go through the
 * {@link Outbox} of that transaction.
 */
@ApplicationScoped
public class SchedulerEngine {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final Mutiny.SessionFactory sessions;
    private final SerialExecutor serial;
    private final Outbox outbox;
    private final JobWatchers watchers;
    private final SchedulerConfig config;
    private final ClusterState cluster = new ClusterState();
    private final FirstFitPlacer placer = new FirstFitPlacer();
    private final Map<String, Instant> heard = new ConcurrentHashMap<>();

    public SchedulerEngine(Mutiny.SessionFactory sessions, SerialExecutor serial, Outbox outbox, JobWatchers watchers,
            SchedulerConfig config) {
        this.sessions = sessions;
        this.serial = serial;
        this.outbox = outbox;
        this.watchers = watchers;
        this.config = config;
    }

    /** What a submission returned: the job, and whether the request id had been seen before. */
    public record Submitted(JobView job, boolean duplicate) {
    }

    void onStart(@Observes StartupEvent event, Vertx vertx) {
        serial.run(this::restore).subscribe().with(
                n -> LOG.infof("restored %d active allocations from the database", n),
                f -> LOG.error("could not restore active allocations", f));
        vertx.setPeriodic(config.outboxRetryInterval().toMillis(), id -> publishOutbox());
        vertx.setPeriodic(config.rescheduleInterval().toMillis(), id -> serial.run(this::schedulePending)
                .subscribe().with(v -> publishOutbox(), f -> LOG.warn("periodic scheduling failed", f)));
    }

    private Uni<Integer> restore() {
        return sessions.withSession(s -> s.createSelectionQuery(
                        "from AllocationEntity where state in ('STARTING', 'RUNNING')", AllocationEntity.class)
                .getResultList()
                .map(rows -> {
                    rows.forEach(a -> cluster.reserve(toAllocation(a)));
                    return rows.size();
                }));
    }

    // ---------------------------------------------------------------- API operations

    /** Accepts a job, or returns the first job of an earlier request with the same id. */
    public Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec) {
        return operation(changes -> sessions.withTransaction(s -> s.createSelectionQuery(
                        "from JobEntity where tenant = :t and clientRequestId = :r", JobEntity.class)
                .setParameter("t", tenant).setParameter("r", clientRequestId)
                .getSingleResultOrNull()
                .flatMap(existing -> {
                    if (existing != null) {
                        return view(s, existing).map(v -> new Submitted(v, true));
                    }
                    JobEntity job = new JobEntity();
                    Instant now = Instant.now();
                    job.id = "job-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
                    job.tenant = tenant;
                    job.clientRequestId = clientRequestId;
                    job.name = spec.name();
                    job.specJson = EventCodec.encodeToString(spec);
                    job.priority = spec.priority().ordinal();
                    job.state = JobState.PENDING;
                    job.reason = "waiting for a placement";
                    job.submittedAt = now;
                    job.updatedAt = now;
                    LOG.infof("accepted %s (%s) for tenant %s: %d worker(s) x %s", job.id, spec.name(), tenant,
                            spec.workers(), shape(spec));
                    return s.persist(job)
                            .call(() -> announce(s, changes, job, List.of()))
                            .flatMap(v -> view(s, job)).map(v -> new Submitted(v, false));
                })))
                .call(submitted -> submitted.duplicate() ? Uni.createFrom().voidItem() : scheduleSoon());
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
                            .map(allocs -> jobs.stream().map(j -> view(j, allocs.stream()
                                    .filter(a -> a.jobId.equals(j.id) && a.attempt == j.attempt).toList())).toList()));
        });
    }

    /** Cancels a job that has not ended and stops its workers; an ended job is returned as it is. */
    public Uni<JobView> cancel(String jobId, String reason) {
        return operation(changes -> sessions.withTransaction(s -> s.find(JobEntity.class, jobId).flatMap(job -> {
            if (job == null) {
                return Uni.createFrom().failure(new JobNotFoundException(jobId));
            }
            if (job.state.isFinal()) {
                return view(s, job);
            }
            return activeAllocations(s, job).flatMap(active -> {
                moveTo(job, JobState.CANCELLED, reason == null || reason.isBlank() ? "cancelled by request" : reason);
                LOG.infof("cancelled %s of tenant %s; stopping %d worker(s)", job.id, job.tenant, active.size());
                return stopAll(s, job, active)
                        .call(() -> announce(s, changes, job, placementOf(active)))
                        .flatMap(v -> view(s, job));
            });
        })));
    }

    // ---------------------------------------------------------------- events from the fleet

    /** A host's fresh description: it may have room for pending jobs. */
    public Uni<Void> hostReported(HostInventory inventory) {
        return operation(changes -> {
            boolean isNew = cluster.host(inventory.nodeId()).isEmpty();
            Instant now = Instant.now();
            cluster.upsertHost(inventory, inventory.observedAt().isAfter(now) ? now : inventory.observedAt());
            if (isNew) {
                LOG.infof("host %s joined: %d x %s, %s, fabric %s", inventory.nodeId(), inventory.gpus().size(),
                        inventory.gpus().isEmpty() ? "no GPU" : inventory.gpus().get(0).model(),
                        inventory.capacityType(), inventory.rdmaFabric());
            }
            return Uni.createFrom().voidItem();
        }).call(this::scheduleSoon);
    }

    /** A host left (inventory tombstone): its allocations are lost and their jobs go back to the queue. */
    public Uni<Void> hostLeft(String nodeId) {
        return operation(changes -> {
            List<Allocation> lost = cluster.removeHost(nodeId);
            LOG.infof("host %s left; %d allocation(s) on it are lost", nodeId, lost.size());
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (Allocation allocation : lost) {
                chain = chain.call(() -> allocationEnded(changes, allocation.allocationId(), AllocationEntity.LOST,
                        null, "host " + nodeId + " left"));
            }
            return chain;
        }).call(this::scheduleSoon);
    }

    /**
     * A host's agent reported telemetry at {@code at}: the host is alive. Called for every telemetry
     * record, so it only notes the time; the cluster model takes it in before it is next read.
     */
    public void heardFrom(String nodeId, Instant at) {
        heard.merge(nodeId, at, (a, b) -> a.isAfter(b) ? a : b);
    }

    /** Moves the telemetry times noted since the last operation into the cluster model. */
    private void applyLiveness() {
        for (String nodeId : List.copyOf(heard.keySet())) {
            Instant at = heard.remove(nodeId);
            if (at != null) {
                cluster.heardFrom(nodeId, at);
            }
        }
    }

    /** A drain (or undrain) from node.events: no new work lands on a draining host. */
    public Uni<Void> setDraining(String nodeId, boolean draining) {
        return operation(changes -> {
            cluster.setDraining(nodeId, draining);
            LOG.infof("host %s %s", nodeId, draining ? "drains" : "accepts work again");
            return Uni.createFrom().voidItem();
        }).call(this::scheduleSoon);
    }

    /** Applies what a host's agent saw happen to an allocation. Repeats are harmless. */
    public Uni<Void> allocationEvent(AllocationEvent event) {
        return operation(changes -> switch (event.type()) {
            case STARTED -> sessions.withTransaction(s -> s.find(AllocationEntity.class, event.allocationId())
                    .flatMap(a -> {
                        if (a == null || !AllocationEntity.STARTING.equals(a.state)) {
                            return Uni.createFrom().voidItem();
                        }
                        a.state = AllocationEntity.RUNNING;
                        a.startedAt = event.occurredAt();
                        LOG.infof("%s worker %d started on %s", a.jobId, a.rank, a.nodeId);
                        return settleJob(s, changes, a.jobId);
                    }));
            case CHECKPOINT_SAVED -> sessions.withTransaction(s -> s.find(JobEntity.class, event.jobId())
                    .flatMap(job -> {
                        if (job == null || job.state.isFinal()) {
                            return Uni.createFrom().voidItem();
                        }
                        job.resumeFrom = event.checkpointPath();
                        job.updatedAt = Instant.now();
                        LOG.infof("%s saved a checkpoint at %s", job.id, event.checkpointPath());
                        return Uni.createFrom().voidItem();
                    }));
            case EXITED -> allocationEnded(changes, event.allocationId(), AllocationEntity.EXITED, event.exitCode(),
                    event.detail());
            case LOST -> allocationEnded(changes, event.allocationId(), AllocationEntity.LOST, null, event.detail());
        }).call(this::scheduleSoon);
    }

    /** A consistent copy of the cluster model, taken between operations. */
    public Uni<ClusterSnapshot> cluster() {
        return serial.run(() -> {
            applyLiveness();
            return Uni.createFrom().item(ClusterSnapshot.of(cluster));
        });
    }

    // ---------------------------------------------------------------- internals

    private Uni<Void> allocationEnded(Changes changes, String allocationId, String endState, Integer exitCode,
            String detail) {
        return sessions.withTransaction(s -> s.find(AllocationEntity.class, allocationId).flatMap(a -> {
            if (a == null || !a.isActive()) {
                return Uni.createFrom().voidItem();
            }
            a.state = endState;
            a.exitCode = exitCode;
            a.endedAt = Instant.now();
            changes.released.add(a.id);
            LOG.infof("%s worker %d on %s %s%s", a.jobId, a.rank, a.nodeId,
                    endState.equals(AllocationEntity.LOST) ? "was lost" : "exited " + exitCode,
                    detail == null || detail.isBlank() ? "" : " (" + detail + ")");
            return settleJob(s, changes, a.jobId);
        }));
    }

    /** Recomputes a job's state from its current attempt's allocations and announces any change. */
    private Uni<Void> settleJob(Mutiny.Session s, Changes changes, String jobId) {
        return s.find(JobEntity.class, jobId).flatMap(job -> allocationsOf(s, job).flatMap(allocs -> {
            if (job.state.isFinal()) {
                return Uni.createFrom().voidItem();
            }
            JobSpec spec = specOf(job);
            boolean lost = allocs.stream().anyMatch(a -> AllocationEntity.LOST.equals(a.state));
            if (lost) {
                List<AllocationEntity> active = allocs.stream().filter(AllocationEntity::isActive).toList();
                moveTo(job, JobState.PENDING, "requeued: a worker was lost"
                        + (job.resumeFrom != null ? "; will resume from " + job.resumeFrom : ""));
                return stopAll(s, job, active).call(() -> announce(s, changes, job, List.of()));
            }
            int started = count(allocs, a -> AllocationEntity.RUNNING.equals(a.state));
            int ok = count(allocs, a -> AllocationEntity.EXITED.equals(a.state) && a.exitCode != null && a.exitCode == 0);
            int failed = count(allocs, a -> AllocationEntity.EXITED.equals(a.state) && (a.exitCode == null || a.exitCode != 0));
            JobState next = JobLifecycle.gangState(job.state, spec.workers(), started, ok, failed);
            if (next == job.state) {
                return Uni.createFrom().voidItem();
            }
            Integer exit = allocs.stream().filter(a -> a.exitCode != null && a.exitCode != 0)
                    .map(a -> a.exitCode).findFirst().orElse(next == JobState.SUCCEEDED ? 0 : null);
            job.exitCode = exit;
            moveTo(job, next, switch (next) {
                case RUNNING -> "all " + spec.workers() + " worker(s) running";
                case SUCCEEDED -> "all workers exited 0";
                case FAILED -> "a worker exited " + exit;
                default -> job.reason;
            });
            LOG.infof("%s of tenant %s is %s", job.id, job.tenant, next);
            List<AllocationEntity> active = allocs.stream().filter(AllocationEntity::isActive).toList();
            Uni<Void> stop = next == JobState.FAILED ? stopAll(s, job, active) : Uni.createFrom().voidItem();
            return stop.call(() -> announce(s, changes, job, placementOf(allocs)));
        }));
    }

    /** Tries every pending job, highest priority and oldest first; places what fits. */
    private Uni<Void> schedulePending() {
        applyLiveness();
        return operationBody(changes -> sessions.withTransaction(s -> s.createSelectionQuery(
                        "from JobEntity where state = :state order by priority desc, submittedAt, id", JobEntity.class)
                .setParameter("state", JobState.PENDING)
                .getResultList()
                .flatMap(pending -> {
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (JobEntity job : pending) {
                        chain = chain.call(() -> tryPlace(s, changes, job));
                    }
                    return chain;
                })
                .onFailure().invoke(f -> changes.reserved.forEach(cluster::release))));
    }

    private Uni<Void> tryPlace(Mutiny.Session s, Changes changes, JobEntity job) {
        JobSpec spec = specOf(job);
        Placement placement = placer.place(spec, cluster, Instant.now().minus(config.hostTimeout()));
        if (!placement.isPlaced()) {
            String reason = "unschedulable: " + placement.summary();
            if (!reason.equals(job.reason)) {
                job.reason = reason;
                job.updatedAt = Instant.now();
                LOG.infof("%s of tenant %s is pending: %s", job.id, job.tenant, placement.summary());
            }
            return Uni.createFrom().voidItem();
        }
        job.attempt++;
        List<AllocationEntity> rows = new ArrayList<>();
        Instant now = Instant.now();
        for (WorkerSlot slot : placement.slots()) {
            AllocationEntity a = new AllocationEntity();
            a.id = job.id + "-a" + job.attempt + "-w" + slot.rank();
            a.jobId = job.id;
            a.attempt = job.attempt;
            a.rank = slot.rank();
            a.nodeId = slot.nodeId();
            a.gpuIndices = AllocationEntity.encodeGpus(slot.gpuIndices());
            a.state = AllocationEntity.STARTING;
            a.createdAt = now;
            rows.add(a);
            cluster.reserve(toAllocation(a));
            changes.reserved.add(a.id);
        }
        moveTo(job, JobState.SCHEDULED, "placed on " + rows.stream().map(a -> a.nodeId + rows(a)).distinct()
                .reduce((x, y) -> x + ", " + y).orElse(""));
        LOG.infof("placed %s of tenant %s: %s", job.id, job.tenant, job.reason.substring("placed on ".length()));
        String master = cluster.host(rows.get(0).nodeId).map(h -> h.inventory().hostname()).orElse(rows.get(0).nodeId)
                + ":29500";
        Uni<Void> chain = s.persistAll(rows.toArray());
        for (AllocationEntity a : rows) {
            chain = chain.call(() -> outbox.add(s, Topics.NODE_COMMANDS, a.nodeId,
                    startCommand(job, spec, a, master)));
        }
        return chain.call(() -> announce(s, changes, job, placementOf(rows)));
    }

    private static String rows(AllocationEntity a) {
        return " GPUs [" + a.gpuIndices + "]";
    }

    private NodeCommand startCommand(JobEntity job, JobSpec spec, AllocationEntity a, String master) {
        String checkpointDir = spec.checkpoint().location() != null ? spec.checkpoint().location() + "/" + job.id
                : config.defaultCheckpointRoot() + "/" + job.id;
        return new NodeCommand(a.id + "/start", NodeCommandType.START, a.nodeId, a.id, job.id, job.tenant, a.gpus(),
                null, 0, a.rank, spec.workers(), master, spec.command(), spec.env(), checkpointDir, job.resumeFrom,
                null, Instant.now());
    }

    private Uni<Void> stopAll(Mutiny.Session s, JobEntity job, List<AllocationEntity> active) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (AllocationEntity a : active) {
            NodeCommand stop = new NodeCommand(a.id + "/stop", NodeCommandType.STOP, a.nodeId, a.id, job.id, job.tenant,
                    a.gpus(), null, 0, a.rank, 0, null, List.of(), Map.of(), null, null, null, Instant.now());
            chain = chain.call(() -> outbox.add(s, Topics.NODE_COMMANDS, a.nodeId, stop));
        }
        return chain;
    }

    private Uni<Void> announce(Mutiny.Session s, Changes changes, JobEntity job, List<WorkerPlacement> placement) {
        JobEvent event = new JobEvent(job.id, job.tenant, job.state, job.reason, job.updatedAt, placement,
                job.resumeFrom);
        changes.events.add(event);
        return outbox.add(s, Topics.JOB_EVENTS, job.id, event);
    }

    private static void moveTo(JobEntity job, JobState next, String reason) {
        job.state = JobLifecycle.move(job.id, job.state, next);
        job.reason = reason;
        job.updatedAt = Instant.now();
    }

    /**
     * Runs one operation through the serial executor; after it commits, applies its in-memory
     * releases, tells watchers, and publishes the outbox.
     */
    private <T> Uni<T> operation(Function<Changes, Uni<T>> body) {
        Changes changes = new Changes();
        return serial.run(() -> body.apply(changes)
                .invoke(() -> changes.released.forEach(cluster::release)))
                .invoke(() -> {
                    changes.events.forEach(watchers::publish);
                    publishOutbox();
                });
    }

    private Uni<Void> operationBody(Function<Changes, Uni<Void>> body) {
        Changes changes = new Changes();
        return body.apply(changes)
                .invoke(() -> changes.released.forEach(cluster::release))
                .invoke(() -> changes.events.forEach(watchers::publish));
    }

    private Uni<Void> scheduleSoon() {
        return serial.run(this::schedulePending).invoke(this::publishOutbox)
                .onFailure().recoverWithItem(f -> {
                    LOG.warn("scheduling pass failed; the next one retries", f);
                    return null;
                });
    }

    private void publishOutbox() {
        outbox.kick();
    }

    private Uni<List<AllocationEntity>> allocationsOf(Mutiny.Session s, JobEntity job) {
        return s.createSelectionQuery("from AllocationEntity where jobId = :j and attempt = :a order by rank",
                        AllocationEntity.class)
                .setParameter("j", job.id).setParameter("a", job.attempt).getResultList();
    }

    private Uni<List<AllocationEntity>> activeAllocations(Mutiny.Session s, JobEntity job) {
        return allocationsOf(s, job).map(all -> all.stream().filter(AllocationEntity::isActive).toList());
    }

    private Uni<JobView> view(Mutiny.Session s, JobEntity job) {
        return allocationsOf(s, job).map(allocs -> view(job, allocs));
    }

    private static JobView view(JobEntity job, List<AllocationEntity> allocs) {
        return new JobView(job.id, job.tenant, job.clientRequestId, specOf(job), job.state, job.reason,
                job.state == JobState.PENDING ? List.of() : placementOf(allocs), job.submittedAt, job.updatedAt,
                job.resumeFrom, job.exitCode);
    }

    private static List<WorkerPlacement> placementOf(List<AllocationEntity> allocs) {
        return allocs.stream().map(a -> new WorkerPlacement(a.rank, a.nodeId, a.gpus(), a.id)).toList();
    }

    private static JobSpec specOf(JobEntity job) {
        return EventCodec.decode("jobs.spec_json of " + job.id, JobSpec.class,
                job.specJson.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static Allocation toAllocation(AllocationEntity a) {
        return new Allocation(a.id, a.jobId, a.rank, a.nodeId, a.gpus());
    }

    private static int count(List<AllocationEntity> allocs, java.util.function.Predicate<AllocationEntity> p) {
        return (int) allocs.stream().filter(p).count();
    }

    static String shape(JobSpec spec) {
        if (spec.gpusPerWorker() > 0) {
            return spec.gpusPerWorker() + " GPU(s)";
        }
        return spec.migProfile() != null ? "MIG " + spec.migProfile() : spec.milliGpu() + " milli-GPU";
    }

    /** What one operation changed, applied to memory and watchers once it commits. */
    private static final class Changes {
        final List<JobEvent> events = new ArrayList<>();
        final List<String> released = new ArrayList<>();
        final List<String> reserved = new ArrayList<>();
    }
}
