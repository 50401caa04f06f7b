package dev.gpucloud.scheduler.service.enrolment;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.KafkaLogin;
import dev.gpucloud.identity.AuditEntries;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.identity.TokenVerifier;
import dev.gpucloud.scheduler.service.config.EnrolmentConfig;
import dev.gpucloud.scheduler.service.config.EnrolmentKey;
import dev.gpucloud.scheduler.service.messaging.AuditTrail;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.jboss.logging.Logger;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.MalformedClaimException;

/**
 * {@code POST /enrolment}: a node agent on Kubernetes gets its enrolment credential here (docs/security.md,
 * "Enrolment on Kubernetes"). It sends the service account token the kubelet projects into its pod; the token is
 * verified against the cluster's issuer (signature, issuer, audience, expiry), must be the node agents' service
 * account's, and names the node the pod runs on; the answer is the credential for that node alone, in its file's
 * form. Every call, enrolled or refused, is logged and leaves an audit record ({@value #ACTION}).
 *
 * <p>Where {@code gpucloud.enrolment.kubernetes.kafka-users.namespace} is set, the answer also carries the agent's
 * own Kafka login ({@code kafka.user=}, {@code kafka.password=}; {@link AgentKafkaUsers}), once Strimzi has made it
 * ready; until then the agent is answered 503 and asks again. Nothing is made for a token that is refused.
 *
 * <p>Off (404, saying so) unless {@code gpucloud.enrolment.kubernetes.issuer} is set; set without a subject or an
 * enrolment key it can read, the service does not start.
 */
@ApplicationScoped
public class EnrolmentEndpoint {

    /** The audit action of an enrolment. */
    public static final String ACTION = "scheduler.Enrol";
    /** The route. */
    public static final String PATH = "/enrolment";

    private static final Logger LOG = Logger.getLogger(EnrolmentEndpoint.class);

    private final AuditTrail trail;
    /** Null when enrolment is off. */
    private final NodeEnrolment enrolment;
    private final TokenVerifier verifier;
    private final String audience;
    /** Null when agents get no Kafka login of their own here. */
    private final AgentKafkaUsers kafkaUsers;

    public EnrolmentEndpoint(AuditTrail trail, EnrolmentConfig config, EnrolmentKey enrolmentKey) {
        this.trail = trail;
        EnrolmentConfig.Kubernetes k8s = config.kubernetes();
        this.audience = k8s.audience();
        if (k8s.issuer().isEmpty()) {
            this.enrolment = null;
            this.verifier = null;
            this.kafkaUsers = null;
            return;
        }
        String subject = k8s.subject().orElseThrow(() -> new IllegalStateException("gpucloud.enrolment.kubernetes"
                + ".subject must name the node agents' service account (system:serviceaccount:NAMESPACE:NAME) when"
                + " gpucloud.enrolment.kubernetes.issuer is set"));
        byte[] key = enrolmentKey.key(); // read once, with the key the consumers verify and STARTs are sealed with
        if (key == null) {
            throw new IllegalStateException("enrolment on Kubernetes mints credentials with the enrolment key: set "
                    + Enrolment.KEY_ENV + " (gpucloud.enrolment.key), or unset gpucloud.enrolment.kubernetes.issuer");
        }
        try {
            this.enrolment = new NodeEnrolment(key, subject);
            this.verifier = TokenVerifier.forPrivateIssuer(k8s.issuer().get(), audience,
                    k8s.issuerTokenFile().map(Path::of).orElse(null), k8s.issuerCa().map(Path::of).orElse(null));
            this.kafkaUsers = AgentKafkaUsers.from(k8s.kafkaUsers());
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot start enrolment on Kubernetes: " + e.getMessage(), e);
        }
    }

    void install(@Observes Router router) {
        if (enrolment == null) {
            LOG.info("node agents' enrolment on Kubernetes is off (no gpucloud.enrolment.kubernetes.issuer):"
                    + " POST " + PATH + " answers 404");
        } else {
            LOG.infof("node agents enrol at POST %s with a service account token of %s for audience %s; %s",
                    PATH, verifier.issuer(), audience, kafkaUsers == null ? "they get no Kafka login of their own"
                            + " (no gpucloud.enrolment.kubernetes.kafka-users.namespace)"
                            : "each gets its own Kafka login, KafkaUser agent-ID in " + kafkaUsers.namespace());
        }
        // verification may fetch the issuer's keys: off the event loop
        router.post(PATH).blockingHandler(this::handle, false);
    }

    private void handle(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        String from = request.remoteAddress() == null ? "" : request.remoteAddress().hostAddress() + ":"
                + request.remoteAddress().port();
        if (enrolment == null) {
            refuse(ctx, from, null, 404, "enrolment of node agents is off here: the scheduler has no"
                    + " gpucloud.enrolment.kubernetes.issuer (docs/security.md, \"Enrolment on Kubernetes\")");
            return;
        }
        String authorization = request.getHeader("Authorization");
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            refuse(ctx, from, null, 401, "no bearer token: send 'Authorization: Bearer <token>' with the service"
                    + " account token projected into the agent's pod for audience '" + audience + "'");
            return;
        }
        JwtClaims claims;
        String subject;
        try {
            claims = verifier.verifiedClaims(authorization.substring(7).strip());
            subject = claims.getSubject();
        } catch (TokenVerifier.Refused e) {
            refuse(ctx, from, null, 401, e.getMessage());
            return;
        } catch (MalformedClaimException e) {
            refuse(ctx, from, null, 401, "the token's subject is not a string");
            return;
        } catch (IOException e) {
            LOG.warnf("cannot verify enrolment tokens: %s", e.getMessage());
            ctx.response().putHeader("Retry-After", "5");
            refuse(ctx, from, null, 503, "the service account issuer " + verifier.issuer() + " could not be read; try"
                    + " again");
            return;
        }
        Caller caller = Caller.of(subject, List.of(), List.of());
        NodeEnrolment.Decision decision = enrolment.decide(subject, claims.getClaimValue(NodeEnrolment.CLAIM));
        if (decision.credential() == null) {
            refuse(ctx, from, caller, decision.status(), decision.message());
            return;
        }
        Enrolment.Credential credential = decision.credential();
        String target = "agent " + credential.agentId() + " for host " + decision.node();
        KafkaLogin login = null;
        if (kafkaUsers != null) {
            try {
                login = kafkaUsers.ensure(credential.agentId());
            } catch (AgentKafkaUsers.NotReady | IOException e) {
                // the scheduler's or Strimzi's trouble, not the agent's: it asks again after a pause
                LOG.warnf("no Kafka login for %s yet: %s", target, e.getMessage());
                ctx.response().putHeader("Retry-After", "5");
                refuse(ctx, from, caller, 503, "the Kafka login of " + target + " is not ready yet; try again ("
                        + e.getMessage() + ")");
                return;
            }
            target = target + " with Kafka user " + login.user();
        }
        String enrolled = target;
        LOG.infof("enrolled %s (%s from %s)", enrolled, subject, from);
        trail.record(AuditEntries.of(caller, null, ACTION, enrolled, Instant.now(), from, AuditEvent.OK, ""));
        // the credential's three lines first, so an agent that knows no login reads the same answer as before
        ctx.response().setStatusCode(200)
                .putHeader("Content-Type", "text/plain; charset=us-ascii")
                .putHeader("Cache-Control", "no-store")
                .end(credential.fileText() + (login == null ? "" : login.fileText()));
    }

    private void refuse(RoutingContext ctx, String from, Caller caller, int status, String message) {
        LOG.warnf("refused enrolment from %s (%s): %d %s", from, caller == null ? "no verified token" : caller.subject(),
                status, message);
        trail.record(AuditEntries.of(caller, null, ACTION, "", Instant.now(), from, result(status), message));
        if (status == 401) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"gpucloud-enrolment\"");
        }
        ctx.response().setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(new JsonObject().put("status", status).put("error", error(status)).put("message", message)
                        .encode());
    }

    /** The HTTP status in the words the audit trail uses for every service's refusals. */
    static String result(int status) {
        return switch (status) {
            case 400 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 503 -> "UNAVAILABLE";
            default -> "HTTP_" + status;
        };
    }

    private static String error(int status) {
        return switch (status) {
            case 400 -> "bad_request";
            case 401 -> "unauthorized";
            case 403 -> "forbidden";
            case 404 -> "not_found";
            default -> "unavailable";
        };
    }
}
