package dev.gpucloud.cli;

import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.ListJobsRequest;
import dev.gpucloud.contracts.grpc.v1.ListJobsResponse;
import dev.gpucloud.identity.BearerToken;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A real gRPC server standing in for the scheduler in the CLI's tests: ListJobs answers one job, and every call's
 * {@code authorization} header is recorded ("null" for a call without one).
 */
final class RecordingScheduler implements AutoCloseable {

    final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final Server server;

    RecordingScheduler() throws IOException {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                authorizations.add(String.valueOf(headers.get(BearerToken.AUTHORIZATION)));
                return Contexts.interceptCall(io.grpc.Context.current(), call, headers, next);
            }
        };
        server = ServerBuilder.forPort(0).addService(ServerInterceptors.intercept(new JobServiceGrpc.JobServiceImplBase() {
            @Override
            public void listJobs(ListJobsRequest request, StreamObserver<ListJobsResponse> response) {
                response.onNext(ListJobsResponse.newBuilder().addJobs(Job.newBuilder().setJobId("j-1")).build());
                response.onCompleted();
            }
        }, recorder)).build().start();
    }

    int port() {
        return server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
