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
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.CookieHandler;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The services accept a real provider's tokens by configuration alone: Keycloak's own distribution (from
 * Maven Central) with a realm of two tenants' members and an operator (tenants as groups, roles as realm
 * roles, the audience by a mapper), and the stack started by {@code ./gpucloud up} with only
 * {@code GPUCLOUD_OIDC_URL} pointing at the realm. The services find Keycloak's keys through its discovery
 * document; one test logs in with the password grant, as a script would, the other with the CLI's device flow,
 * approving it in Keycloak's own pages as a user would in a browser.
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

    @Test
    void the_cli_logs_in_with_the_device_flow_and_refreshes_its_token_by_itself() throws Exception {
        // the jobs the device login must and must not see: one of alice's tenant, one of bob's
        String jobOfAcme = submit(token("alice", "alice-pass"), "kc-dev-alice-" + RUN_ID);
        String jobOfGlobex = submit(token("bob", "bob-pass"), "kc-dev-bob-" + RUN_ID);

        // ./gpucloud login with GPUCLOUD_OIDC_URL naming the realm runs the device flow there; alice approves
        DeviceLogin login = DeviceLogin.start("--profile", "device", "login", "--issuer", REALM_URL);
        assertThat(login.verificationUri()).isEqualTo(REALM_URL + "/device");
        assertThat(login.verificationUriComplete()).isEqualTo(REALM_URL + "/device?user_code=" + login.userCode());
        assertThat(approve(login.verificationUriComplete(), "alice", "alice-pass", true))
                .contains("Device Login Successful");
        Ran loggedIn = login.finish();
        assertThat(loggedIn.code()).as(loggedIn.output()).isZero();
        assertThat(loggedIn.output()).contains("logged in as 'alice' (member").contains("of acme), until ")
                .contains("profile device");
        Path tokenFile = RUN_DIR.resolve("home/profiles/device.token");
        Path refreshFile = RUN_DIR.resolve("home/profiles/device.refresh.json");
        for (Path file : List.of(tokenFile, refreshFile)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        }
        assertThat(Files.readString(refreshFile)).contains("\"token_endpoint\" : \"" + REALM_URL
                + "/protocol/openid-connect/token\"");

        // the stored token is alice's at the scheduler: her tenant's job, not bob's
        assertThat(gpucloud("--profile", "device", "whoami")).contains("'alice' (member").contains("of acme)");
        assertThat(gpucloud("--profile", "device", "jobs")).contains(jobOfAcme).doesNotContain(jobOfGlobex);
        assertThat(gpucloud("--profile", "device", "get", jobOfAcme)).contains(jobOfAcme);
        Ran foreign = gpucloudExit("--profile", "device", "get", jobOfGlobex);
        assertThat(foreign.code()).isEqualTo(1);
        assertThat(foreign.output()).contains("NOT_FOUND");

        // an expired token is refreshed with Keycloak's refresh token before the call: the stored one is made to
        // look expired (its signature no longer matches, so the scheduler would refuse it if it went out)
        String stored = Files.readString(tokenFile).strip();
        Files.writeString(tokenFile, expired(stored) + "\n");
        Ran refreshed = gpucloudExit("--profile", "device", "get", jobOfAcme);
        assertThat(refreshed.code()).as(refreshed.output()).isZero();
        assertThat(refreshed.output()).contains(jobOfAcme).doesNotContain("warning");
        String fresh = Files.readString(tokenFile).strip();
        assertThat(fresh).isNotEqualTo(expired(stored));
        assertThat(EventCodec.mapper().readTree(java.util.Base64.getUrlDecoder().decode(fresh.split("\\.")[1]))
                .get("exp").asLong()).isGreaterThan(java.time.Instant.now().getEpochSecond());

        // bob declines on the consent page: the CLI stops, says why, and stores nothing
        DeviceLogin declined = DeviceLogin.start("--profile", "declined", "login", "--issuer", REALM_URL);
        approve(declined.verificationUriComplete(), "bob", "bob-pass", false);
        Ran denied = declined.finish();
        assertThat(denied.code()).isEqualTo(1);
        assertThat(denied.output()).contains("error: the login was denied at the provider (access_denied)");
        assertThat(RUN_DIR.resolve("home/profiles/declined.token")).doesNotExist();
    }

    /** Submits a one-worker job with this token; its id. */
    static String submit(String token, String requestId) {
        return JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(token))
                .withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder()
                        .setClientRequestId(requestId).setSpec(JobSpec.newBuilder().setName("kc-device").setWorkers(1)
                                .setGpusPerWorker(1).addGpuModels("A100-SXM4-40GB").addCommand("sleep")
                                .addCommand("1"))
                        .build()).getJob().getJobId();
    }

    /** The JWT with its exp moved an hour back (its signature left as it was). */
    static String expired(String jwt) throws Exception {
        String[] parts = jwt.split("\\.");
        var claims = (com.fasterxml.jackson.databind.node.ObjectNode) EventCodec.mapper()
                .readTree(java.util.Base64.getUrlDecoder().decode(parts[1]));
        claims.put("exp", java.time.Instant.now().minusSeconds(3600).getEpochSecond());
        parts[1] = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(EventCodec.mapper()
                .writeValueAsBytes(claims));
        return String.join(".", parts);
    }

    /** ./gpucloud login running the device flow, read as it prints. */
    record DeviceLogin(Process process, Thread reader, StringBuffer output, String verificationUri, String userCode,
            String verificationUriComplete) {

        static final Pattern OPEN = Pattern.compile("to log in, open (\\S+) and enter code (\\S+)");
        static final Pattern COMPLETE = Pattern.compile("\\(or open (\\S+), which carries the code\\)");

        /** Starts the login and waits until it says where to approve. */
        static DeviceLogin start(String... args) throws Exception {
            Process process = gpucloudProcess(args).start();
            StringBuffer output = new StringBuffer();
            Thread reader = new Thread(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                        output.append(line).append('\n');
                    }
                } catch (java.io.IOException ignored) {
                    // the process went
                }
            }, "device-login-output");
            reader.setDaemon(true);
            reader.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (true) {
                Matcher open = OPEN.matcher(output);
                Matcher complete = COMPLETE.matcher(output);
                if (open.find() && complete.find()) {
                    return new DeviceLogin(process, reader, output, open.group(1), open.group(2), complete.group(1));
                }
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    process.destroyForcibly();
                    throw new IllegalStateException("./gpucloud login printed no code to approve:\n" + output);
                }
                Thread.sleep(200);
            }
        }

        /** Waits for the login to end (it polls every 5 s); its exit code and everything it printed. */
        Ran finish() throws Exception {
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException("./gpucloud login did not end:\n" + output);
            }
            reader.join(TimeUnit.SECONDS.toMillis(10)); // its last lines
            return new Ran(process.exitValue(), output.toString());
        }
    }

    /**
     * Does in Keycloak's pages what the user does in a browser: opens the verification URI (which carries the code),
     * signs in on the login form, then accepts (or declines) on the consent page the device grant shows. Forms are
     * found by their action and hidden fields, as a browser submits them. Returns the last page's text.
     */
    static String approve(String verificationUri, String user, String password, boolean accept) throws Exception {
        HttpClient browser = HttpClient.newBuilder().cookieHandler(new CookieJar())
                .followRedirects(HttpClient.Redirect.NORMAL).connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> page = browser.send(HttpRequest.newBuilder(URI.create(verificationUri))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        for (int step = 0; step < 5; step++) {
            assertThat(page.statusCode()).as(page.uri() + ":\n" + page.body()).isEqualTo(200);
            if (page.uri().getPath().endsWith("/device/status")) {
                return page.body().replaceAll("(?s)<script.*?</script>", " ").replaceAll("<[^>]+>", " ")
                        .replaceAll("\\s+", " ");
            }
            Matcher form = Pattern.compile("(?s)<form\\b([^>]*)>(.*?)</form>").matcher(page.body());
            assertThat(form.find()).as("a form on " + page.uri() + ":\n" + page.body()).isTrue();
            Matcher action = Pattern.compile("\\baction=\"([^\"]*)\"").matcher(form.group(1));
            assertThat(action.find()).as(form.group(1)).isTrue();
            Map<String, String> fields = new java.util.LinkedHashMap<>();
            Matcher input = Pattern.compile("(?s)<input\\b([^>]*)>").matcher(form.group(2));
            while (input.find()) {
                String attributes = input.group(1);
                if (attributes.contains("type=\"hidden\"")) {
                    fields.put(attribute(attributes, "name"), attribute(attributes, "value"));
                }
            }
            String body = form.group(2);
            if (body.contains("name=\"username\"")) {
                fields.put("username", user);
                fields.put("password", password);
            } else if (body.contains("name=\"accept\"")) {
                fields.put(accept ? "accept" : "cancel", accept ? "Yes" : "No");
            } else {
                throw new AssertionError("a form this test does not know on " + page.uri() + ":\n" + page.body());
            }
            String form1 = fields.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                    + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                    .collect(java.util.stream.Collectors.joining("&"));
            URI target = page.uri().resolve(action.group(1).replace("&amp;", "&"));
            page = browser.send(HttpRequest.newBuilder(target).header("Content-Type",
                    "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form1))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        }
        throw new AssertionError("Keycloak's pages did not end at the device status page: " + page.uri());
    }

    /**
     * A browser's cookies for one site. Keycloak marks its login cookies Secure even over http; a browser still
     * sends them to localhost, java.net.CookieManager does not.
     */
    static final class CookieJar extends CookieHandler {
        private final Map<String, String> cookies = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public Map<String, List<String>> get(URI uri, Map<String, List<String>> requestHeaders) {
            return cookies.isEmpty() ? Map.of() : Map.of("Cookie", List.of(cookies.entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(java.util.stream.Collectors.joining("; "))));
        }

        @Override
        public void put(URI uri, Map<String, List<String>> responseHeaders) {
            responseHeaders.forEach((header, values) -> {
                if ("set-cookie".equalsIgnoreCase(header)) {
                    for (String cookie : values) {
                        String pair = cookie.split(";", 2)[0];
                        int equals = pair.indexOf('=');
                        if (equals <= 0) {
                            continue;
                        }
                        String name = pair.substring(0, equals).strip();
                        String value = pair.substring(equals + 1).strip();
                        if (value.isEmpty() || cookie.toLowerCase(java.util.Locale.ROOT).contains("max-age=0")) {
                            cookies.remove(name); // how Keycloak clears one
                        } else {
                            cookies.put(name, value);
                        }
                    }
                }
            });
        }
    }

    private static String attribute(String attributes, String name) {
        Matcher value = Pattern.compile("\\b" + name + "=\"([^\"]*)\"").matcher(attributes);
        return value.find() ? value.group(1).replace("&amp;", "&") : "";
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
        Ran ran = gpucloudExit(args);
        if (ran.code() != 0) {
            throw new IllegalStateException("./gpucloud " + args[0] + " exited " + ran.code() + ":\n" + ran.output());
        }
        return ran.output();
    }

    record Ran(int code, String output) {
    }

    /** Runs ./gpucloud with this test's stack; its exit code and what it printed (stdout and stderr). */
    static Ran gpucloudExit(String... args) throws Exception {
        String name = String.join("-", args).replaceAll("[^A-Za-z0-9-]", "_");
        Path log = RUN_DIR.resolve("gpucloud-" + name.substring(0, Math.min(60, name.length())) + ".log");
        Process process = gpucloudProcess(args).redirectOutput(log.toFile()).start();
        if (!process.waitFor(8, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("./gpucloud " + String.join(" ", args) + " did not finish in 8 minutes");
        }
        return new Ran(process.exitValue(), Files.readString(log));
    }

    /** ./gpucloud ARGS as this test's stack needs it: its ports, run folder, CLI home and provider. */
    static ProcessBuilder gpucloudProcess(String... args) {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("gpucloud").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
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
        env.remove("GPUCLOUD_PROFILE");
        return pb;
    }
}
