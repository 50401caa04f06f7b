package dev.gpucloud.scheduler.service.enrolment;

import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.contracts.kafka.KafkaLogin;
import dev.gpucloud.contracts.kafka.StrimziAcls;
import dev.gpucloud.scheduler.service.config.EnrolmentConfig;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;

/**
 * Each enrolled node agent's own Kafka login on Kubernetes (docs/security.md, "Enrolment on Kubernetes"): a Strimzi
 * {@code KafkaUser} {@code agent-ID} whose ACLs are {@link KafkaAccess#bindings} of {@code agent:ID} (its own group
 * {@code node-agent-ID} only), with its SCRAM password taken from a Secret {@code agent-ID-password} that is made
 * once with a random password and kept: a re-enrolment (a new pod on the node) gets the same login, and a leaked one
 * speaks for one node and can be revoked alone (delete the two objects).
 *
 * <p>Both are created with POST; 409 means they exist, and the existing Secret's password is the answer. The agent
 * logs in as soon as it has the answer, so the answer waits (bounded) until Strimzi's user operator reports the
 * user Ready, that is, until the broker has its credential and ACLs.
 */
public final class AgentKafkaUsers {

    /** The Secret key the password is kept under. */
    static final String PASSWORD_KEY = "password";
    private static final String MANAGED_BY = "scheduler-service";
    private static final Duration POLL = Duration.ofMillis(500);

    /** The user is made but Strimzi has not said it is ready within the wait: the agent should ask again. */
    public static final class NotReady extends Exception {
        NotReady(String message) {
            super(message);
        }
    }

    private final KubernetesApi api;
    private final String namespace;
    private final String cluster;
    private final Duration readyTimeout;

    AgentKafkaUsers(KubernetesApi api, String namespace, String cluster, Duration readyTimeout) {
        this.api = api;
        this.namespace = namespace;
        this.cluster = cluster;
        this.readyTimeout = readyTimeout;
    }

    /** The KafkaUsers {@code config} describes; {@code null} where no namespace is set (off). */
    static AgentKafkaUsers from(EnrolmentConfig.KafkaUsers config) throws IOException {
        if (config.namespace().isEmpty() || config.namespace().get().isBlank()) {
            return null;
        }
        KubernetesApi api = new KubernetesApi(URI.create(config.apiServer().strip()), Path.of(config.tokenFile()),
                Path.of(config.ca()));
        return new AgentKafkaUsers(api, config.namespace().get().strip(), config.cluster(), config.readyTimeout());
    }

    String namespace() {
        return namespace;
    }

    /**
     * The login of agent {@code agentId}, its KafkaUser and password Secret made where missing, once Strimzi says
     * the user is ready.
     *
     * @throws NotReady the user exists but is not ready within the wait
     * @throws IOException the API server could not be reached, or refused (a 403: the scheduler's Role is missing)
     */
    public KafkaLogin ensure(String agentId) throws NotReady, IOException {
        KafkaAccess.Principal principal = KafkaAccess.Principal.parse("agent:" + agentId);
        String password = password(principal, agentId);
        JsonObject user = created(path("apis/" + StrimziAcls.API_VERSION, "kafkausers"), principal.name(),
                kafkaUser(principal, agentId, cluster, secretName(principal)), "KafkaUser");
        Instant giveUp = Instant.now().plus(readyTimeout);
        while (!ready(user)) {
            if (Instant.now().plus(POLL).isAfter(giveUp)) {
                throw new NotReady("Strimzi has not made Kafka user " + principal.name() + " ready within "
                        + readyTimeout.toSeconds() + " s (" + condition(user) + ")");
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for Kafka user " + principal.name(), e);
            }
            KubernetesApi.Reply reply = api.get(path("apis/" + StrimziAcls.API_VERSION, "kafkausers") + "/"
                    + principal.name());
            if (reply.status() != 200) {
                throw failure("read KafkaUser " + principal.name(), reply);
            }
            user = reply.body();
        }
        return new KafkaLogin(principal.name(), password);
    }

    /** The password in the agent's Secret: a new random one where there was none, else the one kept there. */
    private String password(KafkaAccess.Principal principal, String agentId) throws IOException {
        String fresh = KafkaAccess.randomPassword();
        JsonObject secret = created(path("api/v1", "secrets"), secretName(principal),
                secret(principal, agentId, fresh), "Secret");
        String data = secret.getJsonObject("data", new JsonObject()).getString(PASSWORD_KEY);
        if (data == null) {
            throw new IOException("Secret " + secretName(principal) + " in " + namespace + " has no key '"
                    + PASSWORD_KEY + "'");
        }
        String kept = new String(Base64.getDecoder().decode(data), StandardCharsets.US_ASCII);
        try {
            new KafkaLogin(principal.name(), kept);
        } catch (IllegalArgumentException e) {
            throw new IOException("Secret " + secretName(principal) + " in " + namespace + " holds no usable password: "
                    + e.getMessage(), e);
        }
        return kept;
    }

    /** The object after POST: as created (201), or as it already was (409, then GET). */
    private JsonObject created(String collection, String name, JsonObject object, String kind) throws IOException {
        KubernetesApi.Reply reply = api.post(collection, object);
        if (reply.status() == 201 || reply.status() == 200) {
            return reply.body();
        }
        if (reply.status() != 409) {
            throw failure("create " + kind + " " + name, reply);
        }
        KubernetesApi.Reply existing = api.get(collection + "/" + name);
        if (existing.status() != 200) {
            throw failure("read " + kind + " " + name, existing);
        }
        return existing.body();
    }

    private IOException failure(String what, KubernetesApi.Reply reply) {
        String hint = reply.status() == 403 ? " (the scheduler's service account needs the Role scheduler-kafka-users:"
                + " create and get on kafkausers.kafka.strimzi.io and secrets in " + namespace + ")" : "";
        return new IOException("the Kubernetes API refused to " + what + " in " + namespace + ": " + reply.message()
                + hint);
    }

    private String path(String group, String resource) {
        return "/" + group + "/namespaces/" + namespace + "/" + resource;
    }

    static String secretName(KafkaAccess.Principal principal) {
        return principal.name() + "-password";
    }

    /** The Secret with the agent's password (Strimzi's own Secret for the user is named after the user itself). */
    static JsonObject secret(KafkaAccess.Principal principal, String agentId, String password) {
        return new JsonObject().put("apiVersion", "v1").put("kind", "Secret")
                .put("metadata", new JsonObject().put("name", secretName(principal)).put("labels", labels(agentId)))
                .put("type", "Opaque")
                .put("data", new JsonObject().put(PASSWORD_KEY,
                        Base64.getEncoder().encodeToString(password.getBytes(StandardCharsets.US_ASCII))));
    }

    /** The KafkaUser of an agent: SCRAM-SHA-512 with the password from its Secret, the ACLs of KafkaAccess. */
    static JsonObject kafkaUser(KafkaAccess.Principal principal, String agentId, String cluster, String secretName) {
        JsonArray acls = new JsonArray();
        for (StrimziAcls.Rule rule : StrimziAcls.rules(principal)) {
            acls.add(new JsonObject()
                    .put("resource", new JsonObject().put("type", rule.type()).put("name", rule.name())
                            .put("patternType", rule.patternType()))
                    .put("operations", new JsonArray(rule.operations())));
        }
        return new JsonObject().put("apiVersion", StrimziAcls.API_VERSION).put("kind", "KafkaUser")
                .put("metadata", new JsonObject().put("name", principal.name())
                        .put("labels", labels(agentId).put("strimzi.io/cluster", cluster)))
                .put("spec", new JsonObject()
                        .put("authentication", new JsonObject().put("type", "scram-sha-512")
                                .put("password", new JsonObject().put("valueFrom", new JsonObject()
                                        .put("secretKeyRef", new JsonObject().put("name", secretName)
                                                .put("key", PASSWORD_KEY)))))
                        .put("authorization", new JsonObject().put("type", "simple").put("acls", acls)));
    }

    private static JsonObject labels(String agentId) {
        return new JsonObject().put("app.kubernetes.io/managed-by", MANAGED_BY)
                .put("app.kubernetes.io/part-of", "gpucloud").put("gpucloud.dev/agent", agentId);
    }

    /** Whether Strimzi's status says the user is ready: a condition Ready with status True. */
    static boolean ready(JsonObject user) {
        JsonArray conditions = user.getJsonObject("status", new JsonObject()).getJsonArray("conditions", new JsonArray());
        for (int i = 0; i < conditions.size(); i++) {
            if (conditions.getValue(i) instanceof JsonObject c && "Ready".equals(c.getString("type"))) {
                return "True".equals(c.getString("status"));
            }
        }
        return false;
    }

    private static String condition(JsonObject user) {
        JsonArray conditions = user.getJsonObject("status", new JsonObject()).getJsonArray("conditions", new JsonArray());
        return conditions.isEmpty() ? "no status yet" : "conditions " + conditions.encode();
    }
}
