package dev.gpucloud.billing.rest;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.Callers;
import dev.gpucloud.identity.Role;
import io.quarkus.security.identity.CurrentIdentityAssociation;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Who may read or change what (docs/security.md): every request carries a bearer token from the OIDC provider,
 * verified by quarkus-oidc when it is first asked for ({@code quarkus.http.auth.proactive=false}, so that a
 * refusal is this API's JSON error with a hint, not an empty 401). Invoices and advice are for the tenant's
 * members and tenant-admins, finance and operators; closing invoices and booking adjustments is for finance
 * alone; the price catalog is read by anyone logged in and changed by operators. A refusal comes before anything
 * is read.
 */
@ApplicationScoped
public class Access {

    static final String AUTHORIZATION = "Authorization";
    private static final Logger LOG = Logger.getLogger(Access.class);
    private static final String HOW_TO_LOG_IN = Caller.howToLogIn("--tenant T --role member");
    private static final String INVALID_TOKEN = "the token is not valid here (expired, not yet valid, not signed by"
            + " the provider, or for another audience or issuer); " + HOW_TO_LOG_IN;

    private final CurrentIdentityAssociation identities;
    private final boolean enabled;
    private final String tenantsClaim;

    public Access(CurrentIdentityAssociation identities,
            @ConfigProperty(name = "gpucloud.auth.enabled", defaultValue = "true") boolean enabled,
            @ConfigProperty(name = "gpucloud.auth.tenants-claim", defaultValue = "gpucloud_tenants") String tenantsClaim) {
        this.identities = identities;
        this.enabled = enabled;
        this.tenantsClaim = tenantsClaim;
        if (!enabled) {
            LOG.warn(Callers.OFF_WARNING);
        }
    }

    /** Runs {@code then} if the caller may read {@code tenant}'s invoices; else answers 401 or 403. */
    public Uni<Response> readingInvoicesOf(String tenant, Supplier<Uni<Response>> then) {
        return withCaller(caller -> caller.readsInvoicesOf(tenant) ? then.get() : forbidden(caller.describe()
                + " may not read the invoices of tenant '" + Check.clip(tenant) + "'"));
    }

    /** Runs {@code then} for an operator; else answers 401 or 403. */
    public Uni<Response> asOperator(String what, Supplier<Uni<Response>> then) {
        return asOperator(what, caller -> { }, then);
    }

    /**
     * Runs {@code then} for an operator; else answers 401 or 403. {@code seen} learns the caller once its token
     * is verified (never, for a request refused 401), for the request's audit record.
     */
    public Uni<Response> asOperator(String what, java.util.function.Consumer<Caller> seen,
            Supplier<Uni<Response>> then) {
        return withCaller(caller -> {
            seen.accept(caller);
            return caller.has(Role.OPERATOR) ? then.get() : forbidden(caller.describe() + " may not " + what
                    + ": that takes the role operator");
        });
    }

    /**
     * Runs {@code then} for finance, the one role that changes what a tenant owes (closing its invoices, booking
     * adjustments); else answers 401 or 403 naming the role. {@code seen} learns the caller once its token is
     * verified (never, for a request refused 401), for the request's audit record.
     */
    public Uni<Response> asFinance(String what, java.util.function.Consumer<Caller> seen,
            Supplier<Uni<Response>> then) {
        return withCaller(caller -> {
            seen.accept(caller);
            return caller.changesInvoices() ? then.get() : forbidden(caller.describe() + " may not " + what
                    + ": that takes the role finance");
        });
    }

    /** Runs {@code then} for anyone with a valid token; else answers 401. */
    public Uni<Response> authenticated(Supplier<Uni<Response>> then) {
        return withCaller(caller -> then.get());
    }

    private Uni<Response> withCaller(java.util.function.Function<Caller, Uni<Response>> then) {
        if (!enabled) {
            return then.apply(Caller.authenticationOff());
        }
        return identities.getDeferredIdentity()
                .onFailure().transform(invalid -> new Refused(INVALID_TOKEN))
                .map(this::callerOf)
                .onItemOrFailure().transformToUni((caller, failure) -> {
                    if (failure instanceof Refused refused) {
                        LOG.infof("refused a request: %s", refused.getMessage());
                        return Uni.createFrom().item(unauthorizedResponse(refused.getMessage()));
                    }
                    return failure != null ? Uni.createFrom().failure(failure) : then.apply(caller);
                });
    }

    private Caller callerOf(SecurityIdentity identity) {
        if (identity.isAnonymous()) {
            throw new Refused("no bearer token: " + HOW_TO_LOG_IN);
        }
        try {
            return Callers.of(identity, tenantsClaim);
        } catch (IllegalArgumentException malformed) {
            throw new Refused(malformed.getMessage() + "; " + HOW_TO_LOG_IN);
        }
    }

    private static Response unauthorizedResponse(String message) {
        return Response.fromResponse(new ApiError("unauthorized", AUTHORIZATION, message)
                .toResponse(Response.Status.UNAUTHORIZED)).header("WWW-Authenticate", "Bearer").build();
    }

    private static Uni<Response> forbidden(String message) {
        return Uni.createFrom().item(new ApiError("forbidden", AUTHORIZATION, message)
                .toResponse(Response.Status.FORBIDDEN));
    }

    /** Why a verified token makes no caller. */
    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }
}
