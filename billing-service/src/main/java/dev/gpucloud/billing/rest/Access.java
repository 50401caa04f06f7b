package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.config.AuthConfig;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.Role;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.security.identity.CurrentIdentityAssociation;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.core.Response;
import java.util.function.Supplier;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.logging.Logger;

/**
 * Who may read or change what (docs/security.md): every request carries a bearer token from the OIDC provider,
 * verified by quarkus-oidc when it is first asked for ({@code quarkus.http.auth.proactive=false}, so that a
 * refusal is this API's JSON error with a hint, not an empty 401). Invoices and advice are for the tenant's
 * members and tenant-admins, finance and operators; the price catalog is read by anyone logged in and changed
 * by operators. A refusal comes before anything is read.
 */
@ApplicationScoped
public class Access {

    static final String AUTHORIZATION = "Authorization";
    private static final Logger LOG = Logger.getLogger(Access.class);
    private static final String HOW_TO_LOG_IN = "log in with `./gpucloud login` (`--dev --tenant T --role member`"
            + " against the local issuer) and send 'Authorization: Bearer <token>'";
    private static final String INVALID_TOKEN = "the token is not valid here (expired, not yet valid, not signed by"
            + " the provider, or for another audience or issuer); " + HOW_TO_LOG_IN;

    private final CurrentIdentityAssociation identities;
    private final AuthConfig config;

    public Access(CurrentIdentityAssociation identities, AuthConfig config) {
        this.identities = identities;
        this.config = config;
    }

    void onStart(@Observes StartupEvent ignored) {
        if (!config.enabled()) {
            LOG.warn("authentication is OFF (gpucloud.auth.enabled=false): every caller may do everything;"
                    + " this setting is for the service's own tests");
        }
    }

    /** Runs {@code then} if the caller may read {@code tenant}'s invoices; else answers 401 or 403. */
    public Uni<Response> readingInvoicesOf(String tenant, Supplier<Uni<Response>> then) {
        return withCaller(caller -> caller.readsInvoicesOf(tenant) ? then.get() : forbidden(caller.describe()
                + " may not read the invoices of tenant '" + dev.gpucloud.contracts.limits.Check.clip(tenant) + "'"));
    }

    /** Runs {@code then} for an operator; else answers 401 or 403. */
    public Uni<Response> asOperator(String what, Supplier<Uni<Response>> then) {
        return withCaller(caller -> caller.has(Role.OPERATOR) ? then.get() : forbidden(caller.describe()
                + " may not " + what + ": that takes the role operator"));
    }

    /** Runs {@code then} for anyone with a valid token; else answers 401. */
    public Uni<Response> authenticated(Supplier<Uni<Response>> then) {
        return withCaller(caller -> then.get());
    }

    private Uni<Response> withCaller(java.util.function.Function<Caller, Uni<Response>> then) {
        if (!config.enabled()) {
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
        String subject = identity.getPrincipal().getName();
        Object tenants = null;
        if (identity.getPrincipal() instanceof JsonWebToken jwt) {
            tenants = jwt.getClaim(config.tenantsClaim());
            String username = jwt.getClaim("preferred_username");
            subject = username != null ? username : jwt.getSubject() != null ? jwt.getSubject() : subject;
        }
        try {
            return Caller.fromClaims(subject, config.tenantsClaim(), tenants, identity.getRoles());
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
