package dev.gpucloud.scheduler.service.grpc;

import dev.gpucloud.identity.BearerToken;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.Callers;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.quarkus.oidc.AccessTokenCredential;
import io.quarkus.oidc.TenantIdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Every call of the scheduler's API carries a bearer token; this interceptor has quarkus-oidc verify it
 * (signature against the provider's keys, issuer, audience, expiry) and hands the call on with its
 * {@link Caller} in the gRPC context, where the services read it with {@link #caller()}. A call without a valid
 * token ends UNAUTHENTICATED with what was wrong and how to log in; nothing of it reaches the service.
 *
 * <p>Verification is asynchronous (a key set may have to be fetched), so the call's events wait in a
 * {@link Waiting} listener until the token is settled, and the settled call goes on on the Vert.x context it
 * arrived on.
 */
@ApplicationScoped
public class Authentication implements ServerInterceptor {

    private static final Logger LOG = Logger.getLogger(Authentication.class);
    private static final Context.Key<Caller> CALLER = Context.key("gpucloud.caller");
    /**
     * Longer than real providers' access tokens, and under the HTTP/2 header list the server accepts (8 KiB), so
     * that this check answers; a longer header is refused by the transport before any of this runs.
     */
    static final int MAX_TOKEN_CHARS = 6 * 1024;
    static final String HOW_TO_LOG_IN = Caller.howToLogIn("--tenant T --role member");

    private final boolean enabled;
    private final String tenantsClaim;
    private final TenantIdentityProvider identities;

    public Authentication(@ConfigProperty(name = "gpucloud.auth.enabled", defaultValue = "true") boolean enabled,
            @ConfigProperty(name = "gpucloud.auth.tenants-claim", defaultValue = "gpucloud_tenants") String tenantsClaim,
            TenantIdentityProvider identities) {
        this.enabled = enabled;
        this.tenantsClaim = tenantsClaim;
        this.identities = identities;
        if (!enabled) {
            LOG.warn(Callers.OFF_WARNING);
        }
    }

    /** The caller of the call being served. */
    public static Caller caller() {
        Caller caller = CALLER.get();
        if (caller == null) {
            throw new IllegalStateException("no caller: the call did not pass through Authentication");
        }
        return caller;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
            ServerCallHandler<ReqT, RespT> next) {
        Context context = Context.current();
        if (!enabled) {
            return Contexts.interceptCall(context.withValue(CALLER, Caller.authenticationOff()), call, headers, next);
        }
        String header = headers.get(BearerToken.AUTHORIZATION);
        String method = call.getMethodDescriptor().getFullMethodName();
        if (header == null || header.isBlank()) {
            return refuse(call, method, "no bearer token: " + HOW_TO_LOG_IN);
        }
        if (header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return refuse(call, method, "the authorization header must be 'Bearer <token>'; " + HOW_TO_LOG_IN);
        }
        String token = header.substring(7).strip();
        if (token.length() > MAX_TOKEN_CHARS) {
            return refuse(call, method, "the token is " + token.length() + " characters, more than "
                    + MAX_TOKEN_CHARS + "; " + HOW_TO_LOG_IN);
        }
        Waiting<ReqT> waiting = new Waiting<>();
        io.vertx.core.Context arrivedOn = Vertx.currentContext();
        Executor back = arrivedOn == null ? Runnable::run : task -> arrivedOn.runOnContext(v -> task.run());
        verify(token).map(Verified::caller)
                .emitOn(back)
                .subscribe().with(
                        caller -> waiting.start(Contexts.interceptCall(context.withValue(CALLER, caller), call, headers,
                                next)),
                        failure -> {
                            String why = why(failure);
                            LOG.infof("refused %s: %s", method, why);
                            waiting.drop();
                            call.close(Status.UNAUTHENTICATED.withDescription(why + "; " + HOW_TO_LOG_IN),
                                    new Metadata());
                        });
        return waiting;
    }

    /** Whether tokens are checked at all (off only in the service's own tests). */
    public boolean enabled() {
        return enabled;
    }

    /** A token that passed: who it names and when it stops passing (null: the token says no expiry). */
    public record Verified(Caller caller, java.time.Instant expires) {
    }

    /**
     * Verifies a bearer token exactly as every API call's is verified (quarkus-oidc: signature, issuer, audience,
     * expiry; then the tenants claim); the web console checks its session cookie's token with this too. Fails with
     * an exception whose {@link #why} says what was wrong, without the token.
     */
    public Uni<Verified> verify(String token) {
        if (!enabled) {
            return Uni.createFrom().item(new Verified(Caller.authenticationOff(), null));
        }
        return identities.authenticate(new AccessTokenCredential(token)).map(identity -> {
            java.time.Instant expires = null;
            if (identity.getPrincipal() instanceof org.eclipse.microprofile.jwt.JsonWebToken jwt
                    && jwt.getExpirationTime() > 0) {
                expires = java.time.Instant.ofEpochSecond(jwt.getExpirationTime());
            }
            return new Verified(callerOf(identity), expires);
        });
    }

    private Caller callerOf(SecurityIdentity identity) {
        try {
            return Callers.of(identity, tenantsClaim);
        } catch (IllegalArgumentException malformed) {
            throw new TokenRefused(malformed.getMessage());
        }
    }

    /** What a verification failure says, without the token or a stack. */
    public static String why(Throwable failure) {
        if (failure instanceof TokenRefused refused) {
            return refused.getMessage();
        }
        return "the token is not valid here (expired, not yet valid, not signed by the provider, or for another"
                + " audience or issuer)";
    }

    private static <ReqT, RespT> ServerCall.Listener<ReqT> refuse(ServerCall<ReqT, RespT> call, String method,
            String why) {
        LOG.infof("refused %s: %s", method, why);
        call.close(Status.UNAUTHENTICATED.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }

    /** A claim that makes no caller: a valid signature over a tenant claim that is not a tenant id. */
    private static final class TokenRefused extends RuntimeException {
        TokenRefused(String message) {
            super(message, null, false, false);
        }
    }

    /** Holds a call's events until its token is settled, then hands them, in order, to the real listener. */
    static final class Waiting<ReqT> extends ServerCall.Listener<ReqT> {
        private final List<Consumer<ServerCall.Listener<ReqT>>> held = new ArrayList<>();
        private ServerCall.Listener<ReqT> delegate;
        private boolean dropped;

        synchronized void start(ServerCall.Listener<ReqT> listener) {
            if (dropped) {
                return;
            }
            delegate = listener;
            held.forEach(event -> event.accept(listener));
            held.clear();
        }

        synchronized void drop() {
            dropped = true;
            held.clear();
        }

        private synchronized void on(Consumer<ServerCall.Listener<ReqT>> event) {
            if (delegate != null) {
                event.accept(delegate);
            } else if (!dropped) {
                held.add(event);
            }
        }

        @Override
        public void onMessage(ReqT message) {
            on(l -> l.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            on(ServerCall.Listener::onHalfClose);
        }

        @Override
        public void onCancel() {
            on(ServerCall.Listener::onCancel);
        }

        @Override
        public void onComplete() {
            on(ServerCall.Listener::onComplete);
        }

        @Override
        public void onReady() {
            on(ServerCall.Listener::onReady);
        }
    }
}
