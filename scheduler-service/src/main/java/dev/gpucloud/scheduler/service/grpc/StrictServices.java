package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobWatchers;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.quarkus.grpc.GrpcService;

/**
 * The gRPC services as the server binds them: {@link JobGrpcService} and {@link ClusterGrpcService} with
 * every request marshaller made strict ({@link StrictRequests}). Generated services may not override
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

        Jobs(SchedulerEngine engine, JobQueries queries, JobWatchers watchers, SchedulerConfig config, LeaderState leader) {
            this.service = new JobGrpcService(engine, queries, watchers, config, leader);
        }

        @Override
        public ServerServiceDefinition bindService() {
            return StrictRequests.of(service.bindService());
        }
    }

    /** gpucloud.v1.ClusterService, strict. */
    @GrpcService
    static class Cluster implements BindableService {
        private final ClusterGrpcService service;

        Cluster(SchedulerEngine engine) {
            this.service = new ClusterGrpcService(engine);
        }

        @Override
        public ServerServiceDefinition bindService() {
            return StrictRequests.of(service.bindService());
        }
    }
}
