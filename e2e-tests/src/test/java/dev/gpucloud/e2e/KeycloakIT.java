package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.identity.BearerToken;
import io.grpc.ManagedChannel;
import java.io.File;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The services accept a real provider's tokens by configuration alone: Keycloak's own distribution (from
 * Maven Central) with a realm of two tenants' members and an operator (tenants as groups, roles as realm
 * roles, the audience by a mapper), and the stack started by {@code ./gpucloud up} with only
 * {@code GPUCLOUD_OIDC_URL} pointing at the realm. The services find Keycloak's keys through its discovery
 * document; the test logs in with the password grant, as a script would.
 */
class KeycloakIT {

    static final int KEYCLOAK = 18480;
    static final int KEYCLOAK_MANAGEMENT = 18490;
    static final int SCHEDULER = 18381;
    static final int BILLING = 18382;
    static final String REALM_URL = "http://localhost:" + KEYCLOAK + "/realms/gpucloud";
    static final String RUN_ID = UUID.randomUUID().toString().substring(0, 6);
    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path RUN_DIR = ROOT.resolve("e2e-tests/target/keycloak-run");
    static final Path KEYCLOAK_HOME = Path.of(System.getProperty("keycloak.home", "target/keycloak/keycloak"));
    static final HttpClient HTTP = HttpClient.newHttpClient();
    /** Speaks TLS to the stack's services, trusting only the CA that up made for it. */
    static HttpClient services;

    static Process keycloak;
    static ManagedChannel channel;

    @BeforeAll
    static void up() throws Exception {
        Files.createDirectories(RUN_DIR);
        Path imports = KEYCLOAK_HOME.resolve("data/import");
        Files.createDirectories(imports);
        try (var realm = KeycloakIT.class.getResourceAsStream("/keycloak/gpucloud-realm.json")) {
            Files.copy(realm, imports.resolve("gpucloud-realm.json"), StandardCopyOption.REPLACE_EXISTING);
        }
        ProcessBuilder kc = new ProcessBuilder("bash", KEYCLOAK_HOME.resolve("bin/kc.sh").toString(), "start-dev",
                "--http-port=" + KEYCLOAK, "--http-management-port=" + KEYCLOAK_MANAGEMENT, "--import-realm",
                "--http-host=127.0.0.1")
                .redirectErrorStream(true).redirectOutput(RUN_DIR.resolve("keycloak.log").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        kc.environment().put("JAVA_OPTS_KC_HEAP", "-Xms64m -Xmx512m");
        keycloak = kc.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        while (!answers(REALM_URL + "/.well-known/openid-configuration")) {
            if (!keycloak.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("Keycloak did not serve the realm in 300 s:\n"
                        + tail(RUN_DIR.resolve("keycloak.log")));
            }
            Thread.sleep(1000);
        }
        gpucloud("up");
        channel = StackTls.channel(RUN_DIR, SCHEDULER);
        services = StackTls.http(RUN_DIR);
    }

    @AfterAll
    static void down() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        try {
            gpucloud("down");
        } finally {
            if (keycloak != null) {
                keycloak.descendants().forEach(ProcessHandle::destroy);
                keycloak.destroy();
                keycloak.waitFor(30, TimeUnit.SECONDS);
                keycloak.descendants().forEach(ProcessHandle::destroyForcibly);
                keycloak.destroyForcibly();
            }
        }
    }

    @Test
    void keycloak_tokens_decide_who_may_do_what() throws Exception {
        String alice = token("alice", "alice-pass");
        String bob = token("bob", "bob-pass");
        String ops = token("ops", "ops-pass");

        // alice's tenant comes from her Keycloak group; the request does not name it
        var asAlice = JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(alice))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        Job job = asAlice.submitJob(SubmitJobRequest.newBuilder().setClientRequestId("kc-" + RUN_ID)
                .setSpec(JobSpec.newBuilder().setName("kc").setWorkers(1).setGpusPerWorker(1)
                        .addGpuModels("A100-SXM4-40GB").addCommand("sleep").addCommand("2"))
                .build()).getJob();
        assertThat(job.getTenant()).isEqualTo("acme");
        assertThat(asAlice.getJob(GetJobRequest.newBuilder().setJobId(job.getJobId()).build()).getTenant())
                .isEqualTo("acme");

        var asBob = JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(bob))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> asBob.getJob(GetJobRequest.newBuilder().setJobId(job.getJobId()).build()))
                .hasMessageStartingWith("NOT_FOUND");
        assertThatThrownBy(() -> asBob.submitJob(SubmitJobRequest.newBuilder().setTenant("acme")
                .setClientRequestId("kc-bob-" + RUN_ID).setSpec(JobSpec.newBuilder().setName("x").setWorkers(1)
                        .setGpusPerWorker(1).addCommand("true")).build()))
                .hasMessageStartingWith("PERMISSION_DENIED");

        // the operator role comes from Keycloak's realm roles
        assertThat(ClusterServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(ops))
                .withDeadlineAfter(30, TimeUnit.SECONDS).listNodes(ListNodesRequest.getDefaultInstance())
                .getNodesList()).anySatisfy(n -> assertThat(n.getNodeId()).startsWith("kc" + RUN_ID));
        assertThatThrownBy(() -> ClusterServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(alice))
                .withDeadlineAfter(30, TimeUnit.SECONDS).listNodes(ListNodesRequest.getDefaultInstance()))
                .hasMessageStartingWith("PERMISSION_DENIED");

        // billing verifies the same tokens
        assertThat(billing("/invoices/acme", alice).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = billing("/invoices/acme", bob);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(refused.body()).contains("'bob' (member of globex) may not read the invoices of tenant 'acme'");
        assertThat(billing("/invoices/acme", null).statusCode()).isEqualTo(401);

        // a token of the development issuer is not one of Keycloak's: the stack trusts only its provider
        String foreign = dev.gpucloud.identity.DevIssuer.inMemory(REALM_URL).mint("mallory", List.of("acme"),
                List.of("operator"), Duration.ofMinutes(5));
        assertThatThrownBy(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(foreign))
                .withDeadlineAfter(30, TimeUnit.SECONDS).getJob(GetJobRequest.newBuilder().setJobId(job.getJobId())
                        .build()))
                .hasMessageStartingWith("UNAUTHENTICATED");

        // the CLI stores a provider's token as it is and says whose it is
        gpucloud("login", "--token", alice);
        assertThat(gpucloud("whoami")).contains("'alice' (member").contains("of acme)");
    }

    /** An access token from Keycloak's token endpoint (the password grant of the realm's public client). */
    static String token(String user, String password) throws Exception {
        String form = "grant_type=password&client_id=gpucloud-cli&username=" + user + "&password="
                + URLEncoder.encode(password, StandardCharsets.UTF_8) + "&scope=openid";
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(REALM_URL
                        + "/protocol/openid-connect/token")).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = EventCodec.mapper().readTree(r.body());
        return body.get("access_token").asText();
    }

    static HttpResponse<String> billing(String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://localhost:" + BILLING + path))
                .timeout(Duration.ofSeconds(20));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return services.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static boolean answers(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (Exception notYet) {
            return false;
        }
    }

    static String tail(Path log) throws Exception {
        List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /** Runs ./gpucloud with this test's stack (its own ports and run folder) and returns what it printed. */
    static String gpucloud(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("gpucloud").toString()));
        command.addAll(List.of(args));
        Path log = RUN_DIR.resolve("gpucloud-" + args[0] + ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.put("GPUCLOUD_RUN_DIR", RUN_DIR.toString());
        env.put("GPUCLOUD_HOME", RUN_DIR.resolve("home").toString());
        env.put("GPUCLOUD_OIDC_URL", REALM_URL);
        env.put("GPUCLOUD_SCHEDULER_PORT", String.valueOf(SCHEDULER));
        env.put("GPUCLOUD_BILLING_PORT", String.valueOf(BILLING));
        env.put("GPUCLOUD_METRICS_PORT", "18383");
        env.put("GPUCLOUD_AGENT_PORT", "18384");
        env.put("GPUCLOUD_ISSUER_PORT", "18386");
        env.put("GPUCLOUD_AGENT_ID", "kc-" + RUN_ID);
        env.put("GPUCLOUD_AGENT_SIM_NODE_PREFIX", "kc" + RUN_ID);
        env.put("GPUCLOUD_AGENT_SIM_FLEET", "a100x8:1");
        env.remove("GPUCLOUD_TOKEN");
        Process process = pb.start();
        if (!process.waitFor(8, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("./gpucloud " + String.join(" ", args) + " did not finish in 8 minutes");
        }
        String out = Files.readString(log);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("./gpucloud " + args[0] + " exited " + process.exitValue() + ":\n" + out);
        }
        return out;
    }
}
