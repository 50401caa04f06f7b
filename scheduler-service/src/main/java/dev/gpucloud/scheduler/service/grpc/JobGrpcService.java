package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.LogChunk;
import dev.gpucloud.contracts.grpc.v1.LogStream;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobView;
import dev.gpucloud.scheduler.state.JobArrays;
import dev.gpucloud.scheduler.service.engine.JobWatchers;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.logs.JobLogReader;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.smallrye.mutiny.Uni;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/** The JobService gRPC API: validates requests and hands them to the engine. */
public class JobGrpcService extends JobServiceGrpc.JobServiceImplBase {

    private final SchedulerEngine engine;
    private final JobQueries queries;
    private final JobWatchers watchers;
    private final SchedulerConfig config;
    private final PageTokens pageTokens;
    private final LeaderState leader;
    private final JobLogReader logs;

    public JobGrpcService(SchedulerEngine engine, JobQueries queries, JobWatchers watchers, SchedulerConfig config,
            LeaderState leader, JobLogReader logs) {
        this.logs = logs;
        this.engine = engine;
        this.queries = queries;
        this.leader = leader;
        this.watchers = watchers;
        this.config = config;
        this.pageTokens = new PageTokens(config.pageTokenSecret());
    }

    @Override
    public void submitJob(SubmitJobRequest request, StreamObserver<SubmitJobResponse> response) {
        respond(response, () -> {
            String tenant = Access.submittingTenant(Authentication.caller(), request.getTenant());
            String requestId = Check.text(request.getClientRequestId(), Limits.ID, "client_request_id");
            if (!request.hasSpec()) {
                throw GrpcErrors.invalid("missing required field 'spec'");
            }
            // every limit is checked here, before anything is persisted: what is stored always reads back
            JobSpec spec = ProtoMapper.toSpec(request.getSpec()).requireDeadlineAhead(Instant.now());
            // the call's own span (quarkus-opentelemetry's) is the parent of the job's whole trace
            io.opentelemetry.context.Context trace = io.opentelemetry.context.Context.current();
            if (request.hasArray()) {
                if (requestId.length() > JobArrays.MAX_REQUEST_ID) {
                    throw GrpcErrors.invalid("field 'client_request_id' of an array holds " + requestId.length()
                            + " characters, over the limit of " + JobArrays.MAX_REQUEST_ID
                            + " (each element's is it with [index] after it)");
                }
                JobArrays.Plan plan = ProtoMapper.toArray(request.getArray());
                spec.withEnv(JobArrays.variables("arr-000000000000", plan, 0)); // a variable set twice is refused here
                return engine.submitArray(tenant, requestId, spec, plan, trace)
                        .map(s -> SubmitJobResponse.newBuilder().setJob(ProtoMapper.toProto(s.job()))
                                .setDuplicate(s.duplicate()).setArrayId(s.job().arrayId())
                                .setArrayCount(s.arrayCount()).build());
            }
            return engine.submit(tenant, requestId, spec, trace)
                    .map(s -> SubmitJobResponse.newBuilder().setJob(ProtoMapper.toProto(s.job()))
                            .setDuplicate(s.duplicate()).build());
        });
    }

    @Override
    public void getJob(GetJobRequest request, StreamObserver<Job> response) {
        respond(response, () -> {
            Caller caller = Authentication.caller();
            return queries.get(jobId(request.getJobId())).map(job -> Access.readable(caller, job))
                    .map(ProtoMapper::toProto);
        });
    }

    @Override
    public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
        respond(response, () -> {
            String tenant = Access.listingTenant(Authentication.caller(), request.getTenant());
            List<JobState> states = ProtoMapper.states(request.getStatesList());
            int size = request.getPageSize() == 0 ? config.defaultPageSize() : request.getPageSize();
            if (size < 0 || size > config.maxPageSize()) {
                throw GrpcErrors.invalid("field 'page_size' must be within 0.." + config.maxPageSize() + ", was "
                        + request.getPageSize());
            }
            PageTokens.Cursor after = pageTokens.parse(request.getPageToken());
            if (!request.getArrayId().isEmpty()) {
                String arrayId = Check.text(request.getArrayId(), Limits.ID, "array_id");
                // an array's page token carries the last index shown, in the place of a time
                Integer afterIndex = after == null ? null : (int) after.submittedAt().getEpochSecond();
                return queries.listArray(tenant, arrayId, states, size + 1, afterIndex).map(page -> {
                    ListJobsResponse.Builder b = ListJobsResponse.newBuilder();
                    page.stream().limit(size).forEach(v -> b.addJobs(ProtoMapper.toProto(v)));
                    if (page.size() > size) {
                        JobView last = page.get(size - 1);
                        b.setNextPageToken(pageTokens.issue(Instant.ofEpochSecond(last.arrayIndex()), last.jobId()));
                    }
                    return b.build();
                });
            }
            return queries.list(tenant, states, size + 1, after == null ? null : after.submittedAt(),
                    after == null ? null : after.jobId()).map(page -> {
                        ListJobsResponse.Builder b = ListJobsResponse.newBuilder();
                        page.stream().limit(size).forEach(v -> b.addJobs(ProtoMapper.toProto(v)));
                        if (page.size() > size) {
                            JobView last = page.get(size - 1);
                            b.setNextPageToken(pageTokens.issue(last.submittedAt(), last.jobId()));
                        }
                        return b.build();
                    });
        });
    }

    @Override
    public void cancelJob(CancelJobRequest request, StreamObserver<Job> response) {
        respond(response, () -> {
            Check.optionalText(request.getReason(), Limits.DETAIL, "reason");
            Caller caller = Authentication.caller();
            String jobId = jobId(request.getJobId());
            return queries.get(jobId).map(job -> Access.cancellable(caller, job))
                    .flatMap(job -> engine.cancel(jobId, request.getReason())).map(ProtoMapper::toProto);
        });
    }

    @Override
    public void watchJob(WatchJobRequest request, StreamObserver<JobEvent> response) {
        ServerCallStreamObserver<JobEvent> stream = (ServerCallStreamObserver<JobEvent>) response;
        String jobId;
        Caller caller;
        try {
            jobId = jobId(request.getJobId());
            caller = Authentication.caller();
        } catch (RuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        AtomicBoolean done = new AtomicBoolean();
        Runnable[] unwatch = {() -> { }};
        // set while the call is being started, as gRPC requires; the watch below replaces what it undoes
        stream.setOnCancelHandler(() -> {
            done.set(true);
            unwatch[0].run();
        });
        // the caller must be able to read the job before anything of it is streamed
        queries.get(jobId).map(job -> Access.readable(caller, job)).subscribe().with(
                readable -> watch(jobId, stream, done, unwatch),
                failure -> {
                    if (done.compareAndSet(false, true)) {
                        response.onError(GrpcErrors.toStatus(failure));
                    }
                });
    }

    private void watch(String jobId, ServerCallStreamObserver<JobEvent> stream, AtomicBoolean done,
            Runnable[] unwatch) {
        StreamObserver<JobEvent> response = stream;
        if (done.get()) { // cancelled while its access was checked
            return;
        }
        if (!leader.leads()) { // only the leader sees changes as they commit
            response.onError(GrpcErrors.toStatus(leader.notLeader()));
            return;
        }
        Object lock = new Object();
        // Register first, then read the current state, so no change between the two is missed.
        unwatch[0] = watchers.watch(jobId, event -> {
            synchronized (lock) {
                if (done.get() || stream.isCancelled()) {
                    return;
                }
                stream.onNext(ProtoMapper.toProto(event));
                if (event.state().isFinal() && done.compareAndSet(false, true)) {
                    unwatch[0].run();
                    stream.onCompleted();
                }
            }
        }, () -> {
            synchronized (lock) {
                if (done.compareAndSet(false, true)) {
                    unwatch[0].run();
                    stream.onError(GrpcErrors.toStatus(leader.notLeader()));
                }
            }
        });
        if (done.get()) { // cancelled while it registered
            unwatch[0].run();
            return;
        }
        queries.get(jobId).subscribe().with(current -> {
            synchronized (lock) {
                if (done.get()) {
                    return;
                }
                stream.onNext(ProtoMapper.currentAsEvent(current));
                if (current.state().isFinal() && done.compareAndSet(false, true)) {
                    unwatch[0].run();
                    stream.onCompleted();
                }
            }
        }, failure -> {
            synchronized (lock) {
                if (done.compareAndSet(false, true)) {
                    unwatch[0].run();
                    stream.onError(GrpcErrors.toStatus(failure));
                }
            }
        });
    }

    @Override
    public void streamLogs(StreamLogsRequest request, StreamObserver<LogChunk> response) {
        ServerCallStreamObserver<LogChunk> stream = (ServerCallStreamObserver<LogChunk>) response;
        JobLogReader.Request asked;
        Caller caller;
        try {
            caller = Authentication.caller();
            asked = new JobLogReader.Request(jobId(request.getJobId()), request.getFollow(),
                    request.hasSince() ? ProtoMapper.instant(request.getSince(), "since") : null,
                    request.hasRank() ? rank(request.getRank()) : null, stream(request.getStream()));
        } catch (RuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        AtomicBoolean cancelled = new AtomicBoolean();
        stream.setOnCancelHandler(() -> cancelled.set(true));
        // the database is read on the call's Vert.x context, as Hibernate Reactive wants, also from the reader's thread
        io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
        // the caller must be able to read the job before anything of it is streamed
        queries.get(asked.jobId()).map(job -> Access.readable(caller, job)).subscribe().with(job -> {
            if (!asked.follow() && job.state() == JobState.PENDING && job.placement().isEmpty()) {
                response.onError(io.grpc.Status.FAILED_PRECONDITION.withDescription("job " + job.jobId()
                        + " has not run yet, so it has no output (PENDING: " + job.reason() + "); follow it to wait"
                        + " for its output").asRuntimeException());
                return;
            }
            if (!logs.admit()) {
                response.onError(io.grpc.Status.RESOURCE_EXHAUSTED.withDescription("this scheduler already streams "
                        + logs.maxStreams() + " jobs' output; retry in a while").asRuntimeException());
                return;
            }
            logs.start(job, asked, () -> JobLogReader.onContext(context, () -> queries.get(asked.jobId())),
                    () -> JobLogReader.onContext(context, () -> queries.workersEver(asked.jobId())), new JobLogReader.Output() {
                @Override
                public boolean send(dev.gpucloud.contracts.events.JobLogChunk chunk,
                        List<dev.gpucloud.contracts.events.JobLogChunk.Line> lines) {
                    while (!stream.isReady()) { // the client reads slower than the topic is read: wait for it
                        if (cancelled.get() || stream.isCancelled()) {
                            return false;
                        }
                        java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
                    }
                    if (cancelled.get()) {
                        return false;
                    }
                    stream.onNext(ProtoMapper.toProto(chunk, lines));
                    return true;
                }

                @Override
                public boolean cancelled() {
                    return cancelled.get() || stream.isCancelled();
                }
            }, (outcome, failure) -> {
                if (cancelled.get()) {
                    return;
                }
                if (failure != null) {
                    response.onError(io.grpc.Status.UNAVAILABLE.withDescription("cannot read job.logs: "
                            + Check.clip(String.valueOf(failure.getMessage())) + "; retry").asRuntimeException());
                } else if (outcome.neverRan()) {
                    response.onError(io.grpc.Status.FAILED_PRECONDITION.withDescription("job " + asked.jobId()
                            + " never ran, so it has no output").asRuntimeException());
                } else {
                    response.onCompleted();
                }
            });
        }, failure -> {
            if (!cancelled.get()) {
                response.onError(GrpcErrors.toStatus(failure));
            }
        });
    }

    private static int rank(int rank) {
        if (rank < 0 || rank >= Limits.WORKERS.max()) {
            throw GrpcErrors.invalid("field 'rank' must be within 0.." + (Limits.WORKERS.max() - 1) + ", was "
                    + Integer.toUnsignedString(rank));
        }
        return rank;
    }

    private static dev.gpucloud.contracts.events.JobLogChunk.Stream stream(LogStream stream) {
        return switch (stream) {
            case LOG_STREAM_UNSPECIFIED -> null;
            case LOG_STDOUT -> dev.gpucloud.contracts.events.JobLogChunk.Stream.STDOUT;
            case LOG_STDERR -> dev.gpucloud.contracts.events.JobLogChunk.Stream.STDERR;
            case UNRECOGNIZED -> throw GrpcErrors.invalid("field 'stream' has an unknown value");
        };
    }

    private static String jobId(String jobId) {
        return Check.text(jobId, Limits.ID, "job_id");
    }

    /** Runs a call: validation failures and engine failures become gRPC statuses. */
    private static <T> void respond(StreamObserver<T> response, java.util.function.Supplier<Uni<T>> call) {
        Uni<T> uni;
        try {
            uni = call.get();
        } catch (RuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        uni.subscribe().with(item -> {
            response.onNext(item);
            response.onCompleted();
        }, failure -> response.onError(GrpcErrors.toStatus(failure)));
    }
}
