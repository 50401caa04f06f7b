package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobEvent;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.WatchJobRequest;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.JobView;
import dev.gpucloud.scheduler.service.engine.JobWatchers;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/** The JobService gRPC API: validates requests and hands them to the engine. */
@GrpcService
public class JobGrpcService extends JobServiceGrpc.JobServiceImplBase {

    private static final int MAX_ID = 128;

    private final SchedulerEngine engine;
    private final JobWatchers watchers;
    private final SchedulerConfig config;

    public JobGrpcService(SchedulerEngine engine, JobWatchers watchers, SchedulerConfig config) {
        this.engine = engine;
        this.watchers = watchers;
        this.config = config;
    }

    @Override
    public void submitJob(SubmitJobRequest request, StreamObserver<SubmitJobResponse> response) {
        respond(response, () -> {
            String tenant = Tenants.require(request.getTenant(), "tenant");
            String requestId = request.getClientRequestId();
            if (requestId.isBlank() || requestId.length() > MAX_ID) {
                throw GrpcErrors.invalid("field 'client_request_id' must be 1.." + MAX_ID + " characters");
            }
            if (!request.hasSpec()) {
                throw GrpcErrors.invalid("missing required field 'spec'");
            }
            return engine.submit(tenant, requestId, ProtoMapper.toSpec(request.getSpec()))
                    .map(s -> SubmitJobResponse.newBuilder().setJob(ProtoMapper.toProto(s.job()))
                            .setDuplicate(s.duplicate()).build());
        });
    }

    @Override
    public void getJob(GetJobRequest request, StreamObserver<Job> response) {
        respond(response, () -> engine.get(jobId(request.getJobId())).map(ProtoMapper::toProto));
    }

    @Override
    public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
        respond(response, () -> {
            String tenant = request.getTenant().isEmpty() ? null : Tenants.require(request.getTenant(), "tenant");
            List<JobState> states = ProtoMapper.states(request.getStatesList());
            int size = request.getPageSize() == 0 ? config.defaultPageSize() : request.getPageSize();
            if (size < 0 || size > config.maxPageSize()) {
                throw GrpcErrors.invalid("field 'page_size' must be within 0.." + config.maxPageSize());
            }
            PageToken after = PageToken.parse(request.getPageToken());
            return engine.list(tenant, states, size + 1, after == null ? null : after.submittedAt(),
                    after == null ? null : after.jobId()).map(page -> {
                        ListJobsResponse.Builder b = ListJobsResponse.newBuilder();
                        page.stream().limit(size).forEach(v -> b.addJobs(ProtoMapper.toProto(v)));
                        if (page.size() > size) {
                            JobView last = page.get(size - 1);
                            b.setNextPageToken(new PageToken(last.submittedAt(), last.jobId()).encode());
                        }
                        return b.build();
                    });
        });
    }

    @Override
    public void cancelJob(CancelJobRequest request, StreamObserver<Job> response) {
        respond(response, () -> {
            if (request.getReason().length() > 1024) {
                throw GrpcErrors.invalid("field 'reason' must be at most 1024 characters");
            }
            return engine.cancel(jobId(request.getJobId()), request.getReason()).map(ProtoMapper::toProto);
        });
    }

    @Override
    public void watchJob(WatchJobRequest request, StreamObserver<JobEvent> response) {
        ServerCallStreamObserver<JobEvent> stream = (ServerCallStreamObserver<JobEvent>) response;
        String jobId;
        try {
            jobId = jobId(request.getJobId());
        } catch (RuntimeException e) {
            response.onError(GrpcErrors.toStatus(e));
            return;
        }
        AtomicBoolean done = new AtomicBoolean();
        Object lock = new Object();
        Runnable[] unwatch = new Runnable[1];
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
        });
        stream.setOnCancelHandler(() -> {
            done.set(true);
            unwatch[0].run();
        });
        engine.get(jobId).subscribe().with(current -> {
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

    private static String jobId(String jobId) {
        if (jobId.isBlank() || jobId.length() > MAX_ID) {
            throw GrpcErrors.invalid("field 'job_id' must be 1.." + MAX_ID + " characters");
        }
        return jobId;
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

    /** An opaque ListJobs cursor: the (submittedAt, jobId) of the last job of the previous page. */
    record PageToken(Instant submittedAt, String jobId) {
        String encode() {
            String raw = submittedAt.getEpochSecond() + "." + submittedAt.getNano() + ":" + jobId;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }

        static PageToken parse(String token) {
            if (token == null || token.isEmpty()) {
                return null;
            }
            try {
                String raw = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
                int colon = raw.indexOf(':');
                String[] time = raw.substring(0, colon).split("\\.");
                return new PageToken(Instant.ofEpochSecond(Long.parseLong(time[0]), Long.parseLong(time[1])),
                        raw.substring(colon + 1));
            } catch (RuntimeException e) {
                throw GrpcErrors.invalid("field 'page_token' is not a token this service issued");
            }
        }
    }
}
