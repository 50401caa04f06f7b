package dev.gpucloud.scheduler.service.enrolment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeEvent;
import dev.gpucloud.contracts.events.NodeEventType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.Enrolment;
import dev.gpucloud.contracts.kafka.EnrolmentClient;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import dev.gpucloud.testsupport.TestKafka;
import dev.gpucloud.testsupport.TopicTail;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
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
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jose4j.jwt.JwtClaims;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Node agents' enrolment on Kubernetes over real HTTP (issue 15): a local issuer stands in for the cluster's
 * service account issuer and mints tokens shaped like the kubelet's projected ones; the scheduler answers a
 * credential for the token's node alone, and refuses every other token with the right status, minting nothing,
 * each refusal audited on the real broker.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(KubernetesEnrolmentTest.Cluster.class)
class KubernetesEnrolmentTest {

    static final String AGENTS = "system:serviceaccount:gpucloud:node-agent";
    static final String AUDIENCE = "gpucloud-enrolment";

    /** The cluster's issuer (a local one) and an enrolment key file, as the Kubernetes manifests give them. */
    public static class Cluster implements QuarkusTestResourceLifecycleManager {
        static byte[] key;

        @Override
        public Map<String, String> start() {
            try {
                key = Enrolment.newKey();
                Path file = Files.createTempFile("gpucloud-enrolment", ".key");
                Files.writeString(file, Base64.getEncoder().encodeToString(key) + "\n");
                file.toFile().deleteOnExit();
                return Map.of("gpucloud.enrolment.key", file.toString(),
                        "gpucloud.enrolment.kubernetes.issuer", TestIssuer.issuer().issuer(),
                        "gpucloud.enrolment.kubernetes.subject", AGENTS);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }

    @TestHTTPResource("/enrolment")
    URL enrolment;

    private final HttpClient http = HttpClient.newHttpClient();
    private TestKafka kafka;

    @BeforeEach
    void connect() {
        kafka = new TestKafka();
    }

    @AfterEach
    void close() {
        kafka.close();
    }

    /** A token as the kubelet projects it for a pod of {@code subject} on {@code node}, changed by {@code edit}. */
    static String token(String subject, String node, Consumer<JwtClaims> edit) {
        DevIssuer cluster = TestIssuer.issuer();
        JwtClaims claims = cluster.claims(subject, List.of(), List.of(), Instant.now(), Duration.ofMinutes(10));
        claims.setAudience(AUDIENCE);
        Map<String, Object> k8s = new LinkedHashMap<>();
        k8s.put("namespace", "gpucloud");
        k8s.put("pod", Map.of("name", "node-agent-x7k2p", "uid", "5e1f7a34-7c1d-4c4e-9d5e-0f1a2b3c4d5e"));
        k8s.put("serviceaccount", Map.of("name", "node-agent", "uid", "0b8c1a8e-2f4d-4b8a-9e61-3c2d1e0f9a8b"));
        if (node != null) {
            k8s.put("node", Map.of("name", node, "uid", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"));
        }
        claims.setClaim("kubernetes.io", k8s);
        edit.accept(claims);
        return cluster.sign(claims);
    }

    HttpResponse<String> post(String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(enrolment.toURI()).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static ConsumerRecord<String, byte[]> consumed(ProducerRecord<String, byte[]> out) {
        ConsumerRecord<String, byte[]> in = new ConsumerRecord<>(out.topic(), 0, 0L, out.key(), out.value());
        out.headers().forEach(h -> in.headers().add(h));
        return in;
    }

    static ProducerRecord<String, byte[]> nodeEvent(String node) {
        NodeEvent event = new NodeEvent(node, NodeEventType.HEARTBEAT_LOST, Instant.now(), null, null, null, "quiet");
        return EventRecords.record(Topics.NODE_EVENTS, node, event,
                CloudEvent.create(Topics.NODE_EVENTS.eventType(), "/node-agent/" + node, Instant.now()));
    }

    @Test
    void an_agents_token_gets_a_credential_whose_records_verify_for_its_node_only() throws Exception {
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());

        HttpResponse<String> answer = post("Bearer " + token(AGENTS, "gpu-node-7", c -> { }));

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Cache-Control")).hasValue("no-store");
        Enrolment.Credential credential = Enrolment.Credential.parse(answer.body());
        assertThat(credential.agentId()).isEqualTo("gpu-node-7");
        assertThat(credential.hosts()).containsExactly("gpu-node-7");
        Enrolment.Verifier readers = new Enrolment.Verifier(Cluster.key);
        assertThat(EventRecords.decode(Topics.NODE_EVENTS, consumed(credential.sign(nodeEvent("gpu-node-7"))),
                Instant.now(), readers).payload().nodeId()).isEqualTo("gpu-node-7");
        assertThatThrownBy(() -> EventRecords.decode(Topics.NODE_EVENTS,
                consumed(credential.sign(nodeEvent("gpu-node-8"))), Instant.now(), readers))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("agent 'gpu-node-7' is enrolled for gpu-node-7, not for host 'gpu-node-8'");

        AuditEvent recorded = audits(audit, 1).get(0);
        assertThat(recorded.subject()).isEqualTo(AGENTS);
        assertThat(recorded.result()).isEqualTo(AuditEvent.OK);
        assertThat(recorded.target()).isEqualTo("agent gpu-node-7 for host gpu-node-7");
        assertThat(recorded.from()).startsWith("127.0.0.1:");
    }

    @Test
    void the_agents_own_client_enrols_with_its_projected_token_file_and_keeps_the_credential_owner_only()
            throws Exception {
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());
        Path dir = Files.createTempDirectory("gpucloud-agent");
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, token(AGENTS, "gpu-node-9", c -> { }));
        Path credentialFile = dir.resolve("enrolment/credential");

        Enrolment.Credential credential = new EnrolmentClient(enrolment.toURI(), tokenFile, null,
                Duration.ofSeconds(20), Duration.ofMillis(200)).enrol(credentialFile);

        assertThat(credential.hosts()).containsExactly("gpu-node-9");
        assertThat(Enrolment.Credential.read(credentialFile).agentId()).isEqualTo("gpu-node-9");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(credentialFile))).isEqualTo("rw-------");
        Files.writeString(tokenFile, token("system:serviceaccount:gpucloud:default", "gpu-node-9", c -> { }));
        assertThatThrownBy(() -> new EnrolmentClient(enrolment.toURI(), tokenFile, null, Duration.ofSeconds(20),
                Duration.ofMillis(200)).enrol(dir.resolve("other")))
                .isInstanceOf(EnrolmentClient.Refused.class).hasMessageContaining("(403)");
        // both calls audited (and read here, so that no later test sees them as its own)
        assertThat(audits(audit, 2)).extracting(AuditEvent::result).containsExactly(AuditEvent.OK, "PERMISSION_DENIED");
    }

    @Test
    void every_other_token_is_refused_with_its_status_minting_nothing_and_each_refusal_is_audited() throws Exception {
        DevIssuer elsewhere = DevIssuer.inMemory("https://elsewhere.example");
        DevIssuer forger = DevIssuer.inMemory(TestIssuer.issuer().issuer());
        JwtClaims forged = TestIssuer.issuer().claims(AGENTS, List.of(), List.of(), Instant.now(), Duration.ofMinutes(5));
        forged.setAudience(AUDIENCE);
        forged.setClaim("kubernetes.io", Map.of("node", Map.of("name", "gpu-node-7")));
        JwtClaims otherIssuer = elsewhere.claims(AGENTS, List.of(), List.of(), Instant.now(), Duration.ofMinutes(5));
        otherIssuer.setAudience(AUDIENCE);
        otherIssuer.setClaim("kubernetes.io", Map.of("node", Map.of("name", "gpu-node-7")));

        record Case(String what, String authorization, int status, String result, String says) {
        }
        List<Case> cases = List.of(
                new Case("no token", null, 401, "UNAUTHENTICATED", "no bearer token"),
                new Case("not a bearer", "Basic bm9kZTpub2Rl", 401, "UNAUTHENTICATED", "no bearer token"),
                new Case("not a JWT", "Bearer hello", 401, "UNAUTHENTICATED", "not valid here"),
                new Case("another audience", "Bearer " + token(AGENTS, "gpu-node-7", c -> c.setAudience("gpucloud")),
                        401, "UNAUTHENTICATED", "not valid here"),
                new Case("another issuer", "Bearer " + elsewhere.sign(otherIssuer), 401, "UNAUTHENTICATED",
                        "not valid here"),
                new Case("signed by another key", "Bearer " + forger.sign(forged), 401, "UNAUTHENTICATED",
                        "not valid here"),
                new Case("expired", "Bearer " + token(AGENTS, "gpu-node-7", c -> c.setExpirationTimeMinutesInTheFuture(-5)),
                        401, "UNAUTHENTICATED", "not valid here"),
                new Case("another service account", "Bearer " + token("system:serviceaccount:gpucloud:default",
                        "gpu-node-7", c -> { }), 403, "PERMISSION_DENIED",
                        "not for the node agents' service account '" + AGENTS + "'"),
                new Case("a user's token", "Bearer " + token("alice", "gpu-node-7", c -> { }), 403,
                        "PERMISSION_DENIED", "the token is for 'alice'"),
                new Case("no node claim", "Bearer " + token(AGENTS, null, c -> { }), 403, "PERMISSION_DENIED",
                        "the token names no node"),
                new Case("no kubernetes.io claim", "Bearer " + token(AGENTS, "gpu-node-7",
                        c -> c.unsetClaim("kubernetes.io")), 403, "PERMISSION_DENIED", "the token names no node"),
                new Case("a node name that climbs out", "Bearer " + token(AGENTS, "../etc", c -> { }), 400,
                        "INVALID_ARGUMENT", "node name '../etc' is not a host name"),
                new Case("SQL in the node name", "Bearer " + token(AGENTS, "gpu'; DROP TABLE jobs;--", c -> { }), 400,
                        "INVALID_ARGUMENT", "is not a host name"),
                new Case("a glob for every host", "Bearer " + token(AGENTS, "*", c -> { }), 400, "INVALID_ARGUMENT",
                        "is not a host name"),
                new Case("a 300-character node name", "Bearer " + token(AGENTS, "n".repeat(300), c -> { }), 400,
                        "INVALID_ARGUMENT", "at most 128 characters"));
        TopicTail audit = kafka.tail(Topics.AUDIT_EVENTS.name());

        for (Case c : cases) {
            HttpResponse<String> answer = post(c.authorization());

            assertThat(answer.statusCode()).as(c.what() + ": " + answer.body()).isEqualTo(c.status());
            JsonObject error = new JsonObject(answer.body());
            assertThat(error.getString("message")).as(c.what()).contains(c.says());
            assertThat(answer.body()).as(c.what() + ": nothing minted").doesNotContain("key=").doesNotContain("agent=");
            if (c.status() == 401) {
                assertThat(answer.headers().firstValue("WWW-Authenticate")).as(c.what()).hasValueSatisfying(
                        v -> assertThat(v).startsWith("Bearer"));
            }
        }

        List<AuditEvent> recorded = audits(audit, cases.size());
        assertThat(recorded).extracting(AuditEvent::result).containsExactlyElementsOf(
                cases.stream().map(Case::result).toList());
        for (int i = 0; i < cases.size(); i++) {
            assertThat(recorded.get(i).reason()).as(cases.get(i).what()).contains(cases.get(i).says());
        }
        assertThat(recorded.get(7).subject()).as("a verified token's subject is recorded")
                .isEqualTo("system:serviceaccount:gpucloud:default");
        assertThat(recorded.get(0).subject()).isEqualTo("(anonymous)");
    }

    @Test
    void only_post_enrols() throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(enrolment.toURI()).GET()
                .header("Authorization", "Bearer " + token(AGENTS, "gpu-node-7", c -> { })).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(answer.statusCode()).isEqualTo(405);
        assertThat(answer.body()).doesNotContain("key=");
    }

    static List<AuditEvent> audits(TopicTail tail, int count) {
        List<AuditEvent> found = new ArrayList<>();
        tail.until(r -> isEnrolment(r), matching -> matching.size() >= count, Duration.ofSeconds(30))
                .forEach(r -> found.add(EventRecords.decode(Topics.AUDIT_EVENTS, r).payload()));
        return found;
    }

    private static boolean isEnrolment(ConsumerRecord<String, byte[]> record) {
        return new String(record.value(), StandardCharsets.UTF_8).contains(EnrolmentEndpoint.ACTION);
    }
}
