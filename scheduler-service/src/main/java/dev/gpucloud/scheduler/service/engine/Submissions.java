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
import dev.gpucloud.scheduler.state.Dependencies;
import dev.gpucloud.scheduler.state.JobArrays;
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
    Uni<Submitted> submit(String tenant, String clientRequestId, JobSpec spec, JobArrays.Plan array, Context trace) {
        if (!leader.leads()) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        String specJson = EventCodec.encodeToString(spec);
        Span span = Spans.child(tracer, "accept job", trace, SpanKind.INTERNAL, LogFields.TENANT, tenant,
                "client_request_id", clientRequestId);
        return Uni.createFrom().<Submitted>emitter(emitter -> {
                    boolean first;
                    synchronized (submissions) {
                        submissions.add(new Submission(tenant, clientRequestId, spec, specJson, array, emitter, span));
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

    /**
     * One submission waiting for the next group commit, in its "accept job" span: a job, or with {@code array} set
     * an array of them.
     */
    private record Submission(String tenant, String clientRequestId, JobSpec spec, String specJson,
            JobArrays.Plan array, UniEmitter<? super Submitted> emitter, Span span) {

        /** The request id its first job is stored under (an array's element 0 has one of its own). */
        String firstRequestId() {
            return array == null ? clientRequestId : JobArrays.elementRequestId(clientRequestId, 0);
        }
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
        return txs.tx(changes, w -> earlierRequests(w, batch).flatMap(found -> dependencies(w, batch)
                .flatMap(standing -> {
                    Map<String, JobEntity> earlier = new HashMap<>();
                    found.forEach(j -> earlier.put(j.tenant + "\u0000" + j.clientRequestId, j));
                    Map<String, Long> admittedMilli = new HashMap<>();
                    Set<JobEntity> accepted = Collections.newSetFromMap(new IdentityHashMap<>());
                    List<JobEntity> created = new ArrayList<>();
                    List<JobSpec> createdSpecs = new ArrayList<>();
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (Submission sub : batch) {
                        String key = sub.tenant() + "\u0000" + sub.firstRequestId();
                        JobEntity existing = earlier.get(key);
                        if (existing != null) {
                            Object repeat = repeated(sub, existing);
                            if (repeat instanceof Submitted s && !accepted.contains(existing)) {
                                chain = chain.call(() -> w.view(existing)
                                        .invoke(v -> outcome.put(sub, new Submitted(v, true, s.arrayCount()))));
                            } else {
                                outcome.put(sub, repeat);
                            }
                            continue;
                        }
                        Dependencies.Verdict verdict = null;
                        try {
                            verdict = verdict(sub, standing.getOrDefault(sub.tenant(), Map.of()));
                            // an array is admitted as a whole: its last element must fit the quota after the others
                            int count = sub.array() == null ? 1 : sub.array().count();
                            long each = Admission.milliGpus(sub.spec());
                            admit(sub.tenant(), sub.spec(),
                                    admittedMilli.getOrDefault(sub.tenant(), 0L) + (count - 1) * each);
                            admittedMilli.merge(sub.tenant(), count * each, Long::sum);
                        } catch (AdmissionException refused) {
                            outcome.put(sub, refused);
                            continue;
                        }
                        List<NewJob> jobs;
                        try {
                            jobs = newJobs(sub, verdict);
                        } catch (IllegalArgumentException invalid) { // the spec sets a variable the array sets
                            outcome.put(sub, invalid);
                            continue;
                        }
                        JobEntity head = jobs.get(0).job();
                        earlier.put(key, head); // a repeat later in this group is a duplicate of it
                        accepted.add(head);
                        outcome.put(sub, jobs);
                        memory.fragmentation.observe(PlacementRequest.of(head.id, head.tenant, 1, sub.spec()));
                        for (NewJob n : jobs) {
                            created.add(n.job());
                            createdSpecs.add(n.spec());
                        }
                    }
                    return chain.call(() -> w.create(created, createdSpecs));
                })))
                .onItemOrFailure().invoke((ignored, failure) -> {
                    for (Submission sub : batch) {
                        Object o = outcome.get(sub);
                        if (failure != null) {
                            sub.emitter().fail(failure);
                        } else if (o instanceof Throwable refused) {
                            sub.emitter().fail(refused);
                        } else if (o instanceof List<?> jobs) {
                            sub.emitter().complete(new Submitted(viewOf(((NewJob) jobs.get(0)).job(), List.of()), false,
                                    sub.array() == null ? 0 : jobs.size()));
                        } else {
                            sub.emitter().complete((Submitted) o);
                        }
                    }
                })
                .onFailure().recoverWithNull().replaceWithVoid();
    }

    /**
     * A submission whose request id was seen: the same spec (for an array, the same element 0 under the array's
     * id) is a duplicate, answered with the first job; another is refused.
     */
    private static Object repeated(Submission sub, JobEntity existing) {
        String expected = sub.specJson();
        if (sub.array() != null) {
            if (existing.arrayId == null) {
                return new AdmissionException(AdmissionException.Kind.CONFLICT, "client_request_id '"
                        + sub.firstRequestId() + "' was already used by job " + existing.id + ", which is no array");
            }
            expected = EventCodec.encodeToString(sub.spec().withEnv(JobArrays.variables(existing.arrayId,
                    sub.array(), 0)));
        }
        if (!JobRows.sameSpec(existing, expected)) {
            return new AdmissionException(AdmissionException.Kind.CONFLICT, "client_request_id '"
                    + sub.clientRequestId() + "' was already used by " + (sub.array() != null ? "array "
                            + existing.arrayId : "job " + existing.id) + " with a different spec");
        }
        return new Submitted(viewOf(existing, List.of()), true, sub.array() == null ? 0 : sub.array().count());
    }

    /**
     * Where the jobs the batch's submissions run after stand, per tenant and dependency id: one query per tenant
     * with dependencies, for the named jobs and every element of the named arrays. Another tenant's jobs are
     * never read, so they read as missing.
     */
    private static Uni<Map<String, Map<String, List<Dependencies.Standing>>>> dependencies(Work w,
            List<Submission> batch) {
        Map<String, Set<String>> idsByTenant = new LinkedHashMap<>();
        for (Submission sub : batch) {
            sub.spec().after().forEach(d -> idsByTenant.computeIfAbsent(sub.tenant(), t -> new LinkedHashSet<>())
                    .add(d.jobId()));
        }
        Map<String, Map<String, List<Dependencies.Standing>>> out = new HashMap<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (var e : idsByTenant.entrySet()) {
            chain = chain.call(() -> JobRows.standing(w.session(), e.getKey(), e.getValue())
                    .invoke(found -> out.put(e.getKey(), found)));
        }
        return chain.replaceWith(out);
    }

    /**
     * What the submission's dependencies say (null: it has none): a dependency the tenant does not have, or one
     * that already ended so the job could never run, refuses it.
     */
    private static Dependencies.Verdict verdict(Submission sub, Map<String, List<Dependencies.Standing>> standing) {
        List<JobSpec.Dependency> after = sub.spec().after();
        if (after.isEmpty()) {
            return null;
        }
        for (int i = 0; i < after.size(); i++) {
            if (standing.getOrDefault(after.get(i).jobId(), List.of()).isEmpty()) {
                throw new AdmissionException(AdmissionException.Kind.DEPENDENCY, "field 'spec.after[" + i
                        + "].job_id': tenant " + sub.tenant() + " has no job or array '" + after.get(i).jobId()
                        + "' to run after");
            }
        }
        Dependencies.Verdict verdict = Dependencies.evaluate(after, standing);
        if (verdict instanceof Dependencies.Verdict.Never never) {
            throw new AdmissionException(AdmissionException.Kind.NEVER_RUNS, "this job would never run: "
                    + never.reason());
        }
        return verdict;
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
            idsByTenant.computeIfAbsent(sub.tenant(), t -> new LinkedHashSet<>()).add(sub.firstRequestId());
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

    /**
     * The submission's rows: one job, or every element of an array (all with the same submission time); waiting
     * for its dependencies while {@code verdict} says so.
     */
    private List<NewJob> newJobs(Submission sub, Dependencies.Verdict verdict) {
        Instant now = Instant.now();
        String hex = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        if (sub.array() == null) {
            return List.of(new NewJob(newJob(sub, "job-" + hex, sub.clientRequestId(), sub.specJson(), verdict, now),
                    sub.spec()));
        }
        String arrayId = Dependencies.ARRAY_PREFIX + hex;
        List<JobSpec> elements = JobArrays.elements(sub.spec(), arrayId, sub.array());
        List<NewJob> jobs = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            JobEntity job = newJob(sub, JobArrays.elementId(arrayId, i),
                    JobArrays.elementRequestId(sub.clientRequestId(), i), EventCodec.encodeToString(elements.get(i)),
                    verdict, now);
            job.arrayId = arrayId;
            job.arrayIndex = i;
            jobs.add(new NewJob(job, elements.get(i)));
        }
        try (LogFields fields = LogFields.of(LogFields.TENANT, sub.tenant())) {
            LOG.infof("accepted array %s (%s) for tenant %s: %d element(s)", arrayId, sub.spec().name(),
                    sub.tenant(), jobs.size());
        }
        return jobs;
    }

    /** A new job's row and its spec. */
    private record NewJob(JobEntity job, JobSpec spec) {
    }

    private JobEntity newJob(Submission sub, String id, String requestId, String specJson,
            Dependencies.Verdict verdict, Instant now) {
        JobEntity job = new JobEntity();
        job.id = id;
        job.tenant = sub.tenant();
        job.clientRequestId = requestId;
        job.name = sub.spec().name();
        job.specJson = JobRows.storedSpec(sub.tenant(), specJson);
        job.priority = sub.spec().priority().ordinal();
        if (verdict instanceof Dependencies.Verdict.Waiting waiting) {
            job.state = JobState.WAITING_FOR_DEPENDENCIES;
            job.reason = waiting.reason();
        } else {
            job.state = JobState.PENDING;
            job.reason = verdict instanceof Dependencies.Verdict.Met met
                    ? "waiting for a placement (" + met.summary() + ")" : "waiting for a placement";
        }
        job.submittedAt = now;
        job.updatedAt = now;
        job.traceparent = Traceparent.of(sub.span());
        if (sub.array() == null) {
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, job.id, LogFields.TENANT, job.tenant,
                    LogFields.TRACE_ID, Spans.traceId(sub.span()))) {
                LOG.infof("accepted %s (%s) for tenant %s: %d worker(s) x %s", job.id, sub.spec().name(), sub.tenant(),
                        sub.spec().workers(), shape(sub.spec()));
            }
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
