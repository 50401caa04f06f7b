package dev.gpucloud.scheduler.service.engine;

import static dev.gpucloud.scheduler.service.engine.JobRows.shape;
import static dev.gpucloud.scheduler.service.engine.JobRows.viewOf;

import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.contracts.tracing.Traceparent;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine.Submitted;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.persistence.JobEntity;
import dev.gpucloud.scheduler.state.Admission;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Takes submitted jobs in ({@code SubmitJob}): admits each as scheduler-core's {@link Admission} says, stores
 * it PENDING and announces it, or answers an earlier request with the same id and spec with that job.
 *
 * <p>Submissions are group-committed: those that arrive while the executor is busy wait in line, and the
 * next turn accepts all of them (up to {@code submit-batch}) in one transaction: one round trip for their
 * earlier requests, one flush for their rows and events. Each is answered on its own: accepted, a
 * duplicate, or refused with why.
 */
final class Submissions {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final Transactions txs;
    private final Memory memory;
    private final PlacementFramework framework;
    private final SchedulerConfig config;
    private final LeaderState leader;
    /** Queues a scheduling pass once new jobs are in. */
    private final Supplier<Uni<Void>> scheduleSoon;
    /** Submissions waiting for their group commit; guarded by itself, as is {@link #submitTurnQueued}. */
    private final ArrayDeque<Submission> submissions = new ArrayDeque<>();
    private boolean submitTurnQueued;
    private final Tracer tracer;

    Submissions(Transactions txs, Memory memory, PlacementFramework framework, SchedulerConfig config,
            LeaderState leader, Supplier<Uni<Void>> scheduleSoon, Tracer tracer) {
        this.tracer = tracer;
        this.txs = txs;
        this.memory = memory;
        this.framework = framework;
        this.config = config;
        this.leader = leader;
        this.scheduleSoon = scheduleSoon;
    }

    /**
     * Accepts a job, or returns the job of an earlier request with the same id and spec, or refuses it; in an
     * "accept job" span, a child of {@code trace}, which the job's row keeps for its later spans.
     */
    Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec, Context trace) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        String specJson = EventCodec.encodeToString(spec);
        Span span = Spans.child(tracer, "accept job", trace, SpanKind.INTERNAL, LogFields.TENANT, tenant,
                "client_request_id", clientRequestId);
        return Uni.createFrom().<Submitted>emitter(emitter -> {
                    boolean first;
                    synchronized (submissions) {
                        submissions.add(new Submission(tenant, clientRequestId, spec, specJson, emitter, span));
                        first = !submitTurnQueued;
                        submitTurnQueued = true;
                    }
                    if (first) {
                        queueSubmitTurn();
                    }
                })
                .invoke(submitted -> span.setAttribute(LogFields.JOB_ID, submitted.job().jobId())
                        .setAttribute("duplicate", submitted.duplicate()))
                .onItemOrFailure().invoke((submitted, failure) -> Spans.end(span, failure))
                .call(submitted -> submitted.duplicate() ? Uni.createFrom().voidItem() : scheduleSoon.get());
    }

    /** One submission waiting for the next group commit, in its "accept job" span. */
    private record Submission(String tenant, String clientRequestId, JobSpec spec, String specJson,
            UniEmitter<? super Submitted> emitter, Span span) {
    }

    private void queueSubmitTurn() {
        txs.operation(this::acceptSubmissions).subscribe()
                .with(v -> { }, f -> LOG.warn("a group of submissions failed", f));
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
        Map<Submission, Object> outcome = new IdentityHashMap<>();
        return txs.tx(changes, w -> earlierRequests(w, batch)
                .flatMap(found -> {
                    Map<String, JobEntity> earlier = new HashMap<>();
                    found.forEach(j -> earlier.put(j.tenant + "\u0000" + j.clientRequestId, j));
                    Map<String, Long> admittedMilli = new HashMap<>();
                    Set<JobEntity> accepted = Collections.newSetFromMap(new IdentityHashMap<>());
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (Submission sub : batch) {
                        String key = sub.tenant() + "\u0000" + sub.clientRequestId();
                        JobEntity existing = earlier.get(key);
                        if (existing != null) {
                            if (!JobRows.sameSpec(existing, sub.specJson())) {
                                outcome.put(sub, new AdmissionException(AdmissionException.Kind.CONFLICT,
                                        "client_request_id '" + sub.clientRequestId() + "' was already used by job "
                                                + existing.id + " with a different spec"));
                            } else if (accepted.contains(existing)) {
                                outcome.put(sub, new Submitted(viewOf(existing, List.of()), true));
                            } else {
                                chain = chain.call(() -> w.view(existing)
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
                        memory.fragmentation.observe(PlacementRequest.of(job.id, job.tenant, 1, sub.spec()));
                        chain = chain.call(() -> w.session().persist(job))
                                .call(() -> w.announce(job, sub.spec(), List.of()));
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

    /**
     * The jobs of earlier requests with the ids of {@code batch}: one query per tenant in it (mostly one), each
     * with one list. A query with a list of the tenants and a list of the ids was planned anew for every pair
     * of list sizes, and Hibernate's plan cache keeps all of those under one hash: looking a plan up compared
     * them one by one, 7% of the scheduler's CPU under load (docs/benchmarks.md).
     */
    private static Uni<List<JobEntity>> earlierRequests(Work w, List<Submission> batch) {
        Map<String, Set<String>> idsByTenant = new LinkedHashMap<>();
        for (Submission sub : batch) {
            idsByTenant.computeIfAbsent(sub.tenant(), t -> new LinkedHashSet<>()).add(sub.clientRequestId());
        }
        List<JobEntity> found = new ArrayList<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (var e : idsByTenant.entrySet()) {
            chain = chain.call(() -> w.session().createSelectionQuery(
                            "from JobEntity where tenant = :t and clientRequestId in :r", JobEntity.class)
                    .setParameter("t", e.getKey()).setParameter("r", List.copyOf(e.getValue()))
                    .getResultList().invoke(found::addAll));
        }
        return chain.replaceWith(found);
    }

    private JobEntity newJob(Submission sub) {
        JobEntity job = new JobEntity();
        Instant now = Instant.now();
        job.id = "job-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        job.tenant = sub.tenant();
        job.clientRequestId = sub.clientRequestId();
        job.name = sub.spec().name();
        job.specJson = JobRows.storedSpec(sub.tenant(), sub.specJson());
        job.priority = sub.spec().priority().ordinal();
        job.state = JobState.PENDING;
        job.reason = "waiting for a placement";
        job.submittedAt = now;
        job.updatedAt = now;
        job.traceparent = Traceparent.of(sub.span());
        try (LogFields fields = LogFields.of(LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant,
                LogFields.TRACE_ID, Spans.traceId(sub.span()))) {
            LOG.infof("accepted %s (%s) for tenant %s: %d worker(s) x %s", job.id, sub.spec().name(), sub.tenant(),
                    sub.spec().workers(), shape(sub.spec()));
        }
        return job;
    }

    /**
     * Admits a job or throws why not ({@link Admission}); {@code alreadyAdmitted} is what this tenant's earlier
     * jobs of the same group commit hold (not yet in the queue). Returns the milli-GPUs this job asks for.
     */
    private long admit(String tenant, JobSpec spec, long alreadyAdmitted) {
        Admission.Refusal refused = Admission.check(config.tenants().orElse(List.of()), tenant, spec, alreadyAdmitted,
                memory.state.queue(), framework, memory.fleet);
        if (refused != null) {
            throw new AdmissionException(AdmissionException.Kind.valueOf(refused.kind().name()), refused.message());
        }
        return Admission.milliGpus(spec);
    }
}
