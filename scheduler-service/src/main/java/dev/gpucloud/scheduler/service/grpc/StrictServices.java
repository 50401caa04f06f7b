package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobWatchers;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.logs.JobLogReader;
import io.grpc.BindableService;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.quarkus.grpc.GrpcService;

/**
 * The gRPC services as the server binds them: {@link JobGrpcService} and {@link ClusterGrpcService} behind
 * {@link Authentication}, their mutating calls recorded by {@link AuditedCalls}, with every request marshaller made strict ({@link StrictRequests}). Generated services may not override
 * {@code bindService()}, and Quarkus takes every BindableService bean for a service of its own, so the
 * implementations are plain objects these beans own.
 */
final class StrictServices {

    private StrictServices() {
    }

    /** gpucloud.v1.JobService, strict. */
    @GrpcService
    static class Jobs implements BindableService {
        private final JobGrpcService service;

        private final Authentication authentication;
        private final AuditedCalls audited;

        Jobs(SchedulerEngine engine, JobQueries queries, JobWatchers watchers, SchedulerConfig config, LeaderState leader,
                JobLogReader logs, Authentication authentication, AuditedCalls audited) {
            this.service = new JobGrpcService(engine, queries, watchers, config, leader, logs);
            this.authentication = authentication;
            this.audited = audited;
        }

        /** The last interceptor runs first: the audit's outer part, Authentication, the audit's inner part. */
        @Override
        public ServerServiceDefinition bindService() {
            return ServerInterceptors.intercept(StrictRequests.of(service.bindService()), audited.inner(),
                    authentication, audited.outer());
        }
    }

    /** gpucloud.v1.ClusterService, strict. */
    @GrpcService
    static class Cluster implements BindableService {
        private final ClusterGrpcService service;

        private final Authentication authentication;
        private final AuditedCalls audited;

        Cluster(SchedulerEngine engine, Authentication authentication, AuditedCalls audited) {
            this.service = new ClusterGrpcService(engine);
            this.authentication = authentication;
            this.audited = audited;
        }

        /** As for JobService: the cordons and drains are recorded. */
        @Override
        public ServerServiceDefinition bindService() {
            return ServerInterceptors.intercept(StrictRequests.of(service.bindService()), audited.inner(),
                    authentication, audited.outer());
        }
    }
}
