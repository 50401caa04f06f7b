package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.CordonNodeRequest;
import dev.gpucloud.contracts.grpc.v1.DrainNodeRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.grpc.v1.UndrainNodeRequest;
import dev.gpucloud.identity.AuditEntries;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.scheduler.service.messaging.AuditTrail;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.SocketAddress;
import java.time.Instant;
import java.util.Map;

/**
 * Every mutating call of the API (SubmitJob, CancelJob, CordonNode, DrainNode, UndrainNode) leaves one audit record when it ends, accepted or refused:
 * {@link #outer()} stands in front of {@link Authentication}, so it sees refusals of calls without a valid token
 * too, and records how each call ended; {@link #inner()} stands behind it and tells the outer one who the caller
 * turned out to be. The request and the answer give the tenant and the target (the job); nothing of a spec is
 * recorded, so no secret value is.
 */
@ApplicationScoped
public class AuditedCalls {

    /** The audited methods, by full gRPC name, and the action each is recorded as. */
    static final Map<String, String> ACTIONS = Map.of(
            JobServiceGrpc.getSubmitJobMethod().getFullMethodName(), "scheduler.SubmitJob",
            JobServiceGrpc.getCancelJobMethod().getFullMethodName(), "scheduler.CancelJob",
            ClusterServiceGrpc.getCordonNodeMethod().getFullMethodName(), "scheduler.CordonNode",
            ClusterServiceGrpc.getDrainNodeMethod().getFullMethodName(), "scheduler.DrainNode",
            ClusterServiceGrpc.getUndrainNodeMethod().getFullMethodName(), "scheduler.UndrainNode");

    private static final Context.Key<Slot> SLOT = Context.key("gpucloud.audit");

    private final AuditTrail trail;

    public AuditedCalls(AuditTrail trail) {
        this.trail = trail;
    }

    /** What one call has shown so far; written by the call's own events, read when it closes. */
    private static final class Slot {
        volatile Caller caller;
        volatile Object request;
        volatile Object response;
    }

    /** In front of Authentication: records each audited call when it closes. */
    ServerInterceptor outer() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call,
                    Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                String action = ACTIONS.get(call.getMethodDescriptor().getFullMethodName());
                if (action == null) {
                    return next.startCall(call, headers);
                }
                Slot slot = new Slot();
                String from = peer(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                ServerCall<ReqT, RespT> recorded = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void sendMessage(RespT message) {
                        slot.response = message;
                        super.sendMessage(message);
                    }

                    @Override
                    public void close(Status status, Metadata trailers) {
                        trail.record(entry(action, slot, from, status));
                        super.close(status, trailers);
                    }
                };
                ServerCall.Listener<ReqT> listener = Contexts.interceptCall(
                        Context.current().withValue(SLOT, slot), recorded, headers, next);
                return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
                    @Override
                    public void onMessage(ReqT message) {
                        slot.request = message;
                        super.onMessage(message);
                    }
                };
            }
        };
    }

    /** Behind Authentication: the verified caller, for the record. */
    ServerInterceptor inner() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call,
                    Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                Slot slot = SLOT.get();
                if (slot != null) {
                    slot.caller = Authentication.caller();
                }
                return next.startCall(call, headers);
            }
        };
    }

    /** The record of a call that ended with {@code status}. */
    static AuditEvent entry(String action, Slot slot, String from, Status status) {
        Caller caller = slot.caller;
        String tenant = "";
        String target = "";
        if (slot.response instanceof SubmitJobResponse submitted) {
            tenant = submitted.getJob().getTenant();
            target = submitted.getJob().getJobId();
        } else if (slot.response instanceof Job job) {
            tenant = job.getTenant();
            target = job.getJobId();
        }
        if (slot.request instanceof SubmitJobRequest submit) {
            tenant = tenant.isEmpty() ? submit.getTenant() : tenant;
            target = target.isEmpty() ? "request " + submit.getClientRequestId() : target;
        } else if (slot.request instanceof CancelJobRequest cancel) {
            target = target.isEmpty() ? cancel.getJobId() : target;
        } else if (slot.request instanceof CordonNodeRequest cordon) {
            target = "host " + cordon.getNodeId() + ": " + cordon.getReason();
        } else if (slot.request instanceof DrainNodeRequest drain) {
            target = "host " + drain.getNodeId() + ": " + drain.getReason()
                    + (drain.getGraceSeconds() == 0 ? "" : " (grace " + drain.getGraceSeconds() + " s)");
        } else if (slot.request instanceof UndrainNodeRequest undrain) {
            target = "host " + undrain.getNodeId();
        }
        if (AuditEntries.tenantOrNone(tenant).isEmpty() && caller != null) {
            tenant = caller.onlyTenant().orElse("");
        }
        String result = status.isOk() ? AuditEvent.OK : status.getCode().name();
        String reason = status.isOk() ? "" : status.getDescription();
        return AuditEntries.of(caller, tenant, action, target, Instant.now(), from, result, reason);
    }

    private static String peer(SocketAddress address) {
        if (address instanceof java.net.InetSocketAddress inet) {
            return (inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString()) + ":"
                    + inet.getPort();
        }
        return address == null ? "" : address.toString();
    }
}
