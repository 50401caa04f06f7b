package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.tracing.JobTrace;
import dev.gpucloud.contracts.tracing.LoggedSpan;
import dev.gpucloud.identity.BearerToken;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole system as real processes: ./gpucloud up starts the broker, the database, the four
 * services and a simulated fleet; one job goes from SubmitJob to a placement, a GPU metric sample
 * and an invoice line. Runs on its own ports and run folder so a developer's stack is left alone.
 */
class WalkingSkeletonIT {

    static final int SCHEDULER = 18081;
    static final int BILLING = 18082;
    static final int METRICS = 18083;
    static final int AGENT = 18084;
    static final String RUN_ID = UUID.randomUUID().toString().substring(0, 6);
    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path RUN_DIR = ROOT.resolve("e2e-tests/target/e2e-run");
    /** Speaks TLS to the services, trusting only the CA that up made for the stack. */
    static HttpClient http;

    static final int ISSUER = 18086;
    static final String TENANT = "e2e-" + RUN_ID;

    static ManagedChannel channel;
    /** The member of TENANT's token, from ./gpucloud login --dev against the issuer that up started. */
    static String token;

    @BeforeAll
    static void up() throws Exception {
        gpucloud("up");
        gpucloud("--profile", "e2e", "login", "--dev", "--user", "e2e", "--tenant", TENANT, "--role", "member");
        gpucloud("--profile", "e2e-other", "login", "--dev", "--user", "other", "--tenant", TENANT + "x", "--role",
                "member");
        token = Files.readString(RUN_DIR.resolve("home/profiles/e2e.token")).strip();
        channel = StackTls.channel(RUN_DIR, SCHEDULER);
        http = StackTls.http(RUN_DIR);
    }

    @AfterAll
    static void down() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        gpucloud("down");
    }

    @Test
    void a_job_is_placed_measured_and_billed() throws Exception {
        String tenant = TENANT;
        var jobs = JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(token));
        Job submitted = jobs.withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder()
                .setTenant(tenant)
                .setClientRequestId("e2e-" + RUN_ID)
                .setSpec(JobSpec.newBuilder().setName("e2e").setWorkers(1).setGpusPerWorker(2)
                        .addGpuModels("A100-SXM4-40GB").addCommand("sleep").addCommand("4"))
                .build()).getJob();
        String id = submitted.getJobId();
        // security on, as shipped: no token is UNAUTHENTICATED, another tenant's member does not find the job
        assertThatThrownBy(() -> JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .getJob(GetJobRequest.newBuilder().setJobId(id).build()))
                .hasMessageStartingWith("UNAUTHENTICATED");
        String other = Files.readString(RUN_DIR.resolve("home/profiles/e2e-other.token")).strip();
        assertThatThrownBy(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(other))
                .withDeadlineAfter(30, TimeUnit.SECONDS).getJob(GetJobRequest.newBuilder().setJobId(id).build()))
                .hasMessageStartingWith("NOT_FOUND");

        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).until(() ->
                jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build()).getState() == JobState.SUCCEEDED);
        Job done = jobs.getJob(GetJobRequest.newBuilder().setJobId(id).build());
        String node = done.getPlacement(0).getNodeId();
        assertThat(node).startsWith("e2e" + RUN_ID);
        assertThat(done.getPlacement(0).getGpuIndicesList()).hasSize(2);

        // what the worker said reached job.logs from its agent (signed, through the broker's ACLs) and StreamLogs
        // serves it to the tenant alone
        var logs = JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(token));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<String> lines = new ArrayList<>();
            logs.withDeadlineAfter(30, TimeUnit.SECONDS).streamLogs(StreamLogsRequest.newBuilder().setJobId(id)
                    .setFollow(true).build()).forEachRemaining(c -> c.getLinesList().forEach(l -> lines.add(
                            c.getStream() + " " + c.getRank() + " " + l.getText())));
            assertThat(lines).hasSize(2);
            assertThat(lines.get(0)).startsWith("LOG_STDOUT 0 ").contains("simulated worker 0 of 1 on " + node)
                    .endsWith("sleep 4 for 4 s");
            assertThat(lines.get(1)).endsWith(" exited 0 after 4 s");
        });
        assertThatThrownBy(() -> JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(other))
                .withDeadlineAfter(30, TimeUnit.SECONDS).streamLogs(StreamLogsRequest.newBuilder().setJobId(id)
                        .build()).hasNext())
                .hasMessageStartingWith("NOT_FOUND");

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
                assertThat(get(METRICS, "/q/metrics")).containsPattern(
                        "DCGM_FI_DEV_GPU_UTIL\\{[^}]*Hostname=\"" + node + "[^\"]*\"[^}]*\\} [0-9.]+"));

        String month = YearMonth.now(ZoneOffset.UTC).toString();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            JsonNode invoice = EventCodec.mapper().readTree(get(BILLING, "/invoices/" + tenant + "?month=" + month,
                    tenant));
            assertThat(invoice.get("lines")).isNotEmpty();
            JsonNode line = invoice.get("lines").get(0);
            assertThat(line.get("jobId").asText()).isEqualTo(id);
            assertThat(line.get("sku").asText()).contains("A100");
            assertThat(line.get("seconds").asLong()).isGreaterThanOrEqualTo(60);
            assertThat(line.get("amountMicros").asLong()).isPositive();
        });

        // the whole path is one trace: SubmitJob -> placement -> node.commands -> the agent's start ->
        // allocation.events and usage.events -> billing's fold into the invoice line, each step a child of the last
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            JobTrace trace = JobTrace.of(LoggedSpan.read(RUN_DIR.resolve("traces")).spans(), id);
            assertThat(trace.traceIds()).as(trace.render()).hasSize(1);
            assertThat(trace.roots()).as(trace.render()).hasSize(1);
            assertThat(trace.services()).contains("scheduler", "node-agent", "billing");
            LoggedSpan fold = trace.spans().stream().filter(sp -> sp.name().equals("usage.events fold")).findFirst()
                    .orElseThrow(() -> new AssertionError("no usage.events fold span:\n" + trace.render()));
            assertThat(ancestry(trace, fold)).as(trace.render()).containsSubsequence("usage.events fold",
                    "usage.events publish", "node.commands START", "node.commands publish", "place job", "accept job",
                    "gpucloud.v1.JobService/SubmitJob");
            assertThat(trace.spans()).extracting(LoggedSpan::name).contains("allocation.events publish",
                    "allocation.events STARTED apply", "job.events publish");
        });
        Path log = RUN_DIR.resolve("gpucloud.log");
        long before = Files.size(log);
        gpucloud("trace", id);
        String shown = Files.readString(log).substring((int) before);
        assertThat(shown).contains("trace ", "scheduler   gpucloud.v1.JobService/SubmitJob", "place job",
                "node-agent  node.commands START", "billing     usage.events fold");
    }

    /** The names of a span and of its parents, up to the trace's root. */
    static List<String> ancestry(JobTrace trace, LoggedSpan span) {
        Map<String, LoggedSpan> byId = new java.util.HashMap<>();
        trace.spans().forEach(s -> byId.put(s.spanId(), s));
        List<String> names = new ArrayList<>();
        for (LoggedSpan at = span; at != null; at = at.parentSpanId() == null ? null : byId.get(at.parentSpanId())) {
            names.add(at.name());
        }
        return names;
    }

    @Test
    void a_client_certificate_from_another_ca_ends_the_handshake_one_from_the_stacks_ca_does_not() throws Exception {
        // no service asks for a certificate (tokens say who calls), but one presented must come from the stack's CA
        Path foreign = StackTls.certificate(ROOT, RUN_DIR.resolve("other-stack"), "client");
        Path own = StackTls.certificate(ROOT, RUN_DIR, "e2e-client");
        javax.net.ssl.SSLContext presentingForeign = StackTls.presenting(RUN_DIR, foreign);
        javax.net.ssl.SSLContext presentingOwn = StackTls.presenting(RUN_DIR, own);
        HttpClient ownClient = StackTls.http(RUN_DIR, own);
        byte[] health = "GET /q/health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int port : new int[] {SCHEDULER, BILLING, METRICS, AGENT}) {
            assertThat(StackTls.exchange(presentingForeign, port, health))
                    .as("port %d, a client certificate from another CA", port).startsWith("refused: ");
            assertThat(StackTls.exchange(presentingOwn, port, health))
                    .as("port %d, a client certificate from the stack's CA", port).startsWith("answered HTTP/1.1 200");
            HttpRequest request = HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/q/health/live"))
                    .timeout(Duration.ofSeconds(10)).build();
            assertThat(ownClient.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
                    .as("port %d, the JDK's HTTP client with the stack's certificate", port).isEqualTo(200);
        }
        // gRPC shares the scheduler's port: a channel presenting the foreign certificate gets no call through
        ManagedChannel foreignChannel = io.grpc.Grpc.newChannelBuilderForAddress("localhost", SCHEDULER,
                io.grpc.TlsChannelCredentials.newBuilder().trustManager(StackTls.ca(RUN_DIR).toFile())
                        .keyManager(StackTls.presentingKeyManager(foreign)).build()).build();
        try {
            assertThatThrownBy(() -> JobServiceGrpc.newBlockingStub(foreignChannel)
                    .withCallCredentials(new BearerToken(token)).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getJob(GetJobRequest.newBuilder().setJobId("j-none").build()))
                    .hasMessageStartingWith("UNAVAILABLE");
        } finally {
            foreignChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static String get(int port, String path) throws IOException, InterruptedException {
        return get(port, path, null);
    }

    /** A GET as the tenant's member (billing answers a tenant only its own invoices). */
    static String get(int port, String path, String tenant) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (tenant != null) {
            request.header("Authorization", new BearerToken(token).header());
        } else if (path.startsWith("/q/metrics")) {
            // the scrape token up made for the stack, as Prometheus sends it
            request.header("Authorization", "Bearer " + java.nio.file.Files.readString(
                    RUN_DIR.resolve("auth/scrape.token")).strip());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    static void gpucloud(String... args) throws Exception {
        Process process = start(ProcessBuilder.Redirect.appendTo(RUN_DIR.resolve("gpucloud.log").toFile()), args);
        if (!process.waitFor(8, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("./gpucloud " + String.join(" ", args) + " did not finish in 8 minutes");
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("./gpucloud " + String.join(" ", args) + " exited " + process.exitValue()
                    + ":\n"
                    + Files.readString(RUN_DIR.resolve("gpucloud.log")));
        }
    }

    /** ./gpucloud with {@code args} against this test's stack, its output (and errors) to {@code output}. */
    static Process start(ProcessBuilder.Redirect output, String... args) throws IOException {
        Files.createDirectories(RUN_DIR);
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("gpucloud").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(ROOT.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.put("GPUCLOUD_RUN_DIR", RUN_DIR.toString());
        env.put("GPUCLOUD_SCHEDULER_PORT", String.valueOf(SCHEDULER));
        env.put("GPUCLOUD_BILLING_PORT", String.valueOf(BILLING));
        env.put("GPUCLOUD_METRICS_PORT", String.valueOf(METRICS));
        env.put("GPUCLOUD_AGENT_PORT", String.valueOf(AGENT));
        env.put("GPUCLOUD_ISSUER_PORT", String.valueOf(ISSUER));
        env.put("GPUCLOUD_HOME", RUN_DIR.resolve("home").toString());
        env.remove("GPUCLOUD_OIDC_URL");
        env.remove("GPUCLOUD_TOKEN");
        env.put("GPUCLOUD_AGENT_ID", "e2e-" + RUN_ID);
        env.put("GPUCLOUD_AGENT_SIM_NODE_PREFIX", "e2e" + RUN_ID);
        env.put("GPUCLOUD_AGENT_SIM_FLEET", "a100x8:1");
        return pb.start();
    }
}
