package dev.gpucloud.agent.rest;

import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.Callers;
import dev.gpucloud.identity.Role;
import dev.gpucloud.identity.TokenVerifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Who may use the agent's own endpoints ({@code /agent/hosts}, {@code /agent/faults}; docs/security.md): an
 * operator, with a bearer token from the stack's OIDC provider, verified by {@link TokenVerifier} (the issuer's
 * keys through discovery, its audience, its validity). No token or a bad one is 401 with a hint how to log in,
 * another role 403 naming the role needed; the endpoint is not reached. Health and metrics ({@code /q/...}) are
 * not this filter's. With {@code gpucloud.auth.enabled=false} (the agent's own tests) everyone passes, and the
 * agent says so at start.
 */
@ApplicationScoped
public class AgentAccess {

    private static final Logger LOG = Logger.getLogger(AgentAccess.class);
    private static final String HOW_TO_LOG_IN = "as an operator: " + Caller.howToLogIn("--role operator");

    private final boolean enabled;
    private final TokenVerifier verifier;

    public AgentAccess(@ConfigProperty(name = "gpucloud.auth.enabled", defaultValue = "true") boolean enabled,
            @ConfigProperty(name = "gpucloud.auth.issuer") String issuer,
            @ConfigProperty(name = "gpucloud.auth.audience", defaultValue = "gpucloud") String audience,
            @ConfigProperty(name = "gpucloud.auth.tenants-claim", defaultValue = "gpucloud_tenants") String tenantsClaim,
            @ConfigProperty(name = "gpucloud.auth.ca-file") Optional<String> caFile) throws IOException {
        this.enabled = enabled;
        // the development issuer's certificate comes from the stack's CA (docs/security.md, "Encryption")
        this.verifier = TokenVerifier.trusting(issuer, audience, tenantsClaim, "groups",
                caFile.filter(f -> !f.isBlank()).map(Path::of).orElse(null));
        if (!enabled) {
            LOG.warn(Callers.OFF_WARNING);
        }
    }

    /** Before every request to {@code /agent/...}: passes an operator's, answers any other itself. */
    @ServerRequestFilter
    public Uni<Response> check(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (!enabled || !(path.equals("/agent") || path.startsWith("/agent/"))) {
            return Uni.createFrom().nullItem();
        }
        String header = request.getHeaderString(HttpHeaders.AUTHORIZATION);
        String what = request.getMethod() + " " + path;
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Uni.createFrom().item(refused(what, Response.Status.UNAUTHORIZED, "no bearer token: " + HOW_TO_LOG_IN));
        }
        String token = header.substring(7).trim();
        // the first token (and one signed with a key not seen yet) reads the issuer's keys: not on the event loop
        return Uni.createFrom().item(() -> judge(what, token))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    private Response judge(String what, String token) {
        Caller caller;
        try {
            caller = verifier.verify(token);
        } catch (TokenVerifier.Refused e) {
            return refused(what, Response.Status.UNAUTHORIZED, e.getMessage() + "; " + HOW_TO_LOG_IN);
        } catch (IOException e) {
            LOG.warnf("cannot verify tokens: %s", e.getMessage());
            return refused(what, Response.Status.SERVICE_UNAVAILABLE, "the agent cannot reach its OIDC provider at "
                    + verifier.issuer() + " to verify the token; retry");
        }
        if (!caller.has(Role.OPERATOR)) {
            return refused(what, Response.Status.FORBIDDEN, caller.describe() + " may not use the agent's endpoints:"
                    + " that takes the role operator");
        }
        return null;
    }

    private static Response refused(String what, Response.Status status, String message) {
        LOG.infof("refused %s: %s", what, message);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status.getStatusCode());
        body.put("error", message);
        Response.ResponseBuilder b = Response.status(status).type(MediaType.APPLICATION_JSON).entity(body);
        if (status == Response.Status.UNAUTHORIZED) {
            b.header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"gpucloud\"");
        }
        return b.build();
    }
}
