package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.scheduler.service.engine.AdmissionException;
import dev.gpucloud.scheduler.service.engine.DatabaseFailures;
import dev.gpucloud.scheduler.service.engine.HostNotFoundException;
import dev.gpucloud.scheduler.service.engine.JobNotFoundException;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.jboss.logging.Logger;

/** Maps failures to gRPC status codes whose message says what is wrong. */
public final class GrpcErrors {

    private static final Logger LOG = Logger.getLogger(GrpcErrors.class);
    /** The trailer a standby names the leader's gRPC address (host:port) in, for the client to retry there. */
    static final Metadata.Key<String> LEADER = Metadata.Key.of("gpucloud-leader", Metadata.ASCII_STRING_MARSHALLER);

    private GrpcErrors() {
    }

    public static StatusRuntimeException toStatus(Throwable failure) {
        if (failure instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (failure instanceof IllegalArgumentException || failure instanceof MalformedEventException) {
            return Status.INVALID_ARGUMENT.withDescription(failure.getMessage()).asRuntimeException();
        }
        if (failure instanceof AdmissionException ae) {
            Status status = switch (ae.kind()) {
                case QUOTA -> Status.RESOURCE_EXHAUSTED;
                case UNSCHEDULABLE -> Status.FAILED_PRECONDITION;
                case UNKNOWN_TENANT -> Status.PERMISSION_DENIED;
                case CONFLICT -> Status.ALREADY_EXISTS;
                case DEPENDENCY -> Status.INVALID_ARGUMENT;
                case NEVER_RUNS -> Status.FAILED_PRECONDITION;
            };
            return status.withDescription(failure.getMessage()).asRuntimeException();
        }
        if (failure instanceof NotLeaderException nl) {
            Metadata trailers = new Metadata();
            if (nl.leaderAddress() != null) {
                trailers.put(LEADER, nl.leaderAddress());
            }
            return Status.UNAVAILABLE.withDescription(failure.getMessage()).asRuntimeException(trailers);
        }
        if (DatabaseFailures.isTransient(failure)) {
            LOG.warnf("a gRPC call failed on the database (%s): answered UNAVAILABLE", DatabaseFailures.clip(failure));
            return Status.UNAVAILABLE.withDescription("the scheduler cannot reach its database just now; retry")
                    .asRuntimeException();
        }
        if (failure instanceof JobNotFoundException || failure instanceof HostNotFoundException) {
            return Status.NOT_FOUND.withDescription(failure.getMessage()).asRuntimeException();
        }
        LOG.error("internal error serving a gRPC call", failure);
        return Status.INTERNAL.withDescription("internal error; see the scheduler's log").asRuntimeException();
    }

    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
