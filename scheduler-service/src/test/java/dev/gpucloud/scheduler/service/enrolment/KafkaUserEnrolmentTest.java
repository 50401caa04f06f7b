package dev.gpucloud.scheduler.service.enrolment;

import static dev.gpucloud.scheduler.service.enrolment.KubernetesEnrolmentTest.AGENTS;
import static dev.gpucloud.scheduler.service.enrolment.KubernetesEnrolmentTest.token;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentClient;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.contracts.kafka.KafkaLogin;
import dev.gpucloud.contracts.kafka.StrimziAcls;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.acl.AclBinding;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each enrolled agent's own Kafka login on Kubernetes (issue 15): the scheduler makes a Strimzi KafkaUser agent-ID
 * and its password's Secret through a stand-in Kubernetes API server (the real wire protocol: POST, 201, 409 then
 * GET, 403 without the Role, a status that turns Ready after a moment), and answers the login with the credential.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(KafkaUserEnrolmentTest.Cluster.class)
class KafkaUserEnrolmentTest {

    static final String SECRETS = "/api/v1/namespaces/gpucloud/secrets";
    static final String USERS = "/apis/kafka.strimzi.io/v1/namespaces/gpucloud/kafkausers";

    /** The cluster: its issuer, the enrolment key, and its API server where the KafkaUsers are made. */
    public static class Cluster implements QuarkusTestResourceLifecycleManager {
        static StandInApiServer api;

        @Override
        public Map<String, String> start() {
            try {
                api = new StandInApiServer();
                Path key = Files.createTempFile("gpucloud-enrolment", ".key");
                Files.writeString(key, Base64.getEncoder().encodeToString(Enrolment.newKey()) + "\n");
                key.toFile().deleteOnExit();
                Path token = Files.createTempFile("scheduler-service", ".token");
                Files.writeString(token, StandInApiServer.TOKEN + "\n");
                token.toFile().deleteOnExit();
                Map<String, String> config = new HashMap<>();
                config.put("gpucloud.enrolment.key", key.toString());
                config.put("gpucloud.enrolment.kubernetes.issuer", TestIssuer.issuer().issuer());
                config.put("gpucloud.enrolment.kubernetes.subject", AGENTS);
                config.put("gpucloud.enrolment.kubernetes.kafka-users.namespace", "gpucloud");
                config.put("gpucloud.enrolment.kubernetes.kafka-users.api-server", api.url());
                config.put("gpucloud.enrolment.kubernetes.kafka-users.token-file", token.toString());
                config.put("gpucloud.enrolment.kubernetes.kafka-users.ready-timeout", "3s");
                return config;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
            api.stop();
        }
    }

    @TestHTTPResource("/enrolment")
    URL enrolment;

    private final HttpClient http = HttpClient.newHttpClient();
    private StandInApiServer api;

    @BeforeEach
    void reset() {
        api = Cluster.api;
        api.reset();
    }

    HttpResponse<String> enrol(String node) throws Exception {
        return post("Bearer " + token(AGENTS, node, c -> { }));
    }

    HttpResponse<String> post(String authorization) throws Exception {
        return http.send(HttpRequest.newBuilder(enrolment.toURI()).timeout(Duration.ofSeconds(30))
                .header("Authorization", authorization).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Every ACL of a KafkaUser's spec, one string each: type name pattern operation. */
    static Set<String> acls(JsonObject kafkaUser) {
        Set<String> acls = new TreeSet<>();
        JsonArray rules = kafkaUser.getJsonObject("spec").getJsonObject("authorization").getJsonArray("acls");
        for (int i = 0; i < rules.size(); i++) {
            JsonObject rule = rules.getJsonObject(i);
            JsonObject resource = rule.getJsonObject("resource");
            for (Object op : rule.getJsonArray("operations")) {
                acls.add(resource.getString("type") + " " + resource.getString("name") + " "
                        + resource.getString("patternType") + " " + op);
            }
        }
        return acls;
    }

    @Test
    void a_first_enrolment_makes_the_agents_secret_and_kafka_user_and_answers_its_login_once_ready() throws Exception {
        HttpResponse<String> answer = enrol("gpu-node-21");

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(Enrolment.Credential.parse(answer.body()).agentId()).isEqualTo("gpu-node-21");
        KafkaLogin login = KafkaLogin.parse(answer.body());
        assertThat(login.user()).isEqualTo("agent-gpu-node-21");
        assertThat(api.requests).allSatisfy(r -> assertThat(r.authorization())
                .isEqualTo("Bearer " + StandInApiServer.TOKEN));

        // the Secret: made once, the password the agent was answered
        assertThat(api.requests("POST", SECRETS)).singleElement().satisfies(r -> {
            assertThat(r.path()).isEqualTo(SECRETS);
            assertThat(r.body().getString("kind")).isEqualTo("Secret");
            assertThat(r.body().getString("type")).isEqualTo("Opaque");
            assertThat(r.body().getJsonObject("metadata").getString("name")).isEqualTo("agent-gpu-node-21-password");
            assertThat(r.body().getJsonObject("data").fieldNames()).containsExactly("password");
            assertThat(new String(Base64.getDecoder().decode(r.body().getJsonObject("data").getString("password")),
                    StandardCharsets.US_ASCII)).isEqualTo(login.password());
        });
        // the KafkaUser: SCRAM with the password from that Secret, exactly KafkaAccess's ACLs for agent:gpu-node-21
        JsonObject user = api.requests("POST", USERS).get(0).body();
        assertThat(api.requests("POST", USERS)).hasSize(1).allMatch(r -> r.path().equals(USERS));
        assertThat(user.getString("apiVersion")).isEqualTo("kafka.strimzi.io/v1");
        assertThat(user.getString("kind")).isEqualTo("KafkaUser");
        assertThat(user.getJsonObject("metadata").getString("name")).isEqualTo("agent-gpu-node-21");
        assertThat(user.getJsonObject("metadata").getJsonObject("labels").getString("strimzi.io/cluster"))
                .isEqualTo("gpucloud");
        assertThat(user.getJsonObject("spec").getJsonObject("authentication")).isEqualTo(new JsonObject()
                .put("type", "scram-sha-512").put("password", new JsonObject().put("valueFrom", new JsonObject()
                        .put("secretKeyRef", new JsonObject().put("name", "agent-gpu-node-21-password")
                                .put("key", "password")))));
        assertThat(user.getJsonObject("spec").getJsonObject("authorization").getString("type")).isEqualTo("simple");
        Set<String> expected = new TreeSet<>();
        for (AclBinding acl : KafkaAccess.bindings(KafkaAccess.Principal.parse("agent:gpu-node-21"))) {
            assertThat(acl.entry().principal()).isEqualTo("User:agent-gpu-node-21");
            expected.add(StrimziAcls.type(acl.pattern().resourceType()) + " " + acl.pattern().name() + " "
                    + StrimziAcls.pattern(acl.pattern().patternType()) + " "
                    + StrimziAcls.operation(acl.entry().operation()));
        }
        assertThat(acls(user)).isEqualTo(expected)
                .contains("topic node.commands literal Read", "topic usage.events literal Write")
                .doesNotContain("topic node.commands literal Write");
        assertThat(acls(user)).filteredOn(a -> a.startsWith("group ")).containsExactly(
                "group node-agent-gpu-node-21 literal Read");
        // answered only once Strimzi said Ready (a second after it was made)
        assertThat(api.userReadsReady).isNotEmpty().endsWith(true);
        assertThat(answer.body()).doesNotContain("key=" + login.password());
    }

    @Test
    void a_re_enrolment_gets_the_same_login_from_the_kept_secret() throws Exception {
        HttpResponse<String> first = enrol("gpu-node-22");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        api.requests.clear();
        Path dir = Files.createTempDirectory("gpucloud-agent");
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, token(AGENTS, "gpu-node-22", c -> { }));

        // a new pod on the same node: the agent's own client
        EnrolmentClient.Answer again = new EnrolmentClient(enrolment.toURI(), tokenFile, null, Duration.ofSeconds(20),
                Duration.ofMillis(200)).enrol(dir.resolve("credential"), KafkaLogin.besideCredential(dir.resolve("credential")));

        assertThat(again.login()).isEqualTo(KafkaLogin.parse(first.body()));
        assertThat(KafkaLogin.read(dir.resolve("credential.kafka"))).isEqualTo(again.login());
        // POST answered 409 (it exists), then the kept Secret read back: no second password
        assertThat(api.requests).extracting(r -> r.method() + " " + r.path()).startsWith(
                "POST " + SECRETS, "GET " + SECRETS + "/agent-gpu-node-22-password",
                "POST " + USERS, "GET " + USERS + "/agent-gpu-node-22");
        assertThat(api.object(SECRETS + "/agent-gpu-node-22-password").getJsonObject("data").getString("password"))
                .isEqualTo(Base64.getEncoder().encodeToString(again.login().password().getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void a_refused_token_makes_nothing() throws Exception {
        HttpResponse<String> otherAccount = post("Bearer " + token("system:serviceaccount:gpucloud:default",
                "gpu-node-24", c -> { }));
        HttpResponse<String> noNode = post("Bearer " + token(AGENTS, null, c -> { }));
        HttpResponse<String> glob = post("Bearer " + token(AGENTS, "*", c -> { }));
        HttpResponse<String> forged = post("Bearer " + token(AGENTS, "gpu-node-24", c -> { }) + "x");

        assertThat(otherAccount.statusCode()).isEqualTo(403);
        assertThat(noNode.statusCode()).isEqualTo(403);
        assertThat(glob.statusCode()).isEqualTo(400);
        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(api.requests).as("no call to the API server").isEmpty();
        assertThat(api.object(USERS + "/agent-gpu-node-24")).isNull();
    }

    @Test
    void a_user_strimzi_does_not_make_ready_in_time_is_503_with_retry_after_and_the_next_try_gets_the_login()
            throws Exception {
        api.neverReady = true;

        HttpResponse<String> waiting = enrol("gpu-node-23");

        assertThat(waiting.statusCode()).as(waiting.body()).isEqualTo(503);
        assertThat(waiting.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(new JsonObject(waiting.body()).getString("message"))
                .contains("Kafka login of agent gpu-node-23", "not ready");
        assertThat(waiting.body()).doesNotContain("key=").doesNotContain("kafka.password");
        assertThat(api.userReadsReady).isNotEmpty().containsOnly(false);
        String kept = api.object(SECRETS + "/agent-gpu-node-23-password").getJsonObject("data").getString("password");

        api.neverReady = false;
        HttpResponse<String> ready = enrol("gpu-node-23");

        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(Base64.getEncoder().encodeToString(KafkaLogin.parse(ready.body()).password()
                .getBytes(StandardCharsets.US_ASCII))).isEqualTo(kept);
    }

    @Test
    void a_scheduler_without_its_role_answers_503_naming_the_role_and_mints_no_login() throws Exception {
        api.forbidden = true;

        HttpResponse<String> answer = enrol("gpu-node-25");

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(new JsonObject(answer.body()).getString("message"))
                .contains("403", "cannot create resource \"secrets\"", "Role scheduler-kafka-users");
        assertThat(answer.body()).doesNotContain("key=").doesNotContain("kafka.password");
        assertThat(api.requests).singleElement().satisfies(r -> assertThat(r.path()).isEqualTo(SECRETS));
    }
}
