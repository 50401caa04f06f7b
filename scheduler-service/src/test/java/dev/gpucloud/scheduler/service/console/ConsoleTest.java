package dev.gpucloud.scheduler.service.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.JobLogChunk;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.identity.BearerToken;
import dev.gpucloud.identity.DevIssuer;
import dev.gpucloud.testsupport.KafkaTestResource;
import dev.gpucloud.testsupport.PostgresTestResource;
import dev.gpucloud.testsupport.TestIssuer;
import dev.gpucloud.testsupport.TestKafka;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The web console's routes against a real issuer, broker and database: sign-in and its refusals, what each caller
 * sees, escaping of what users and agents wrote, paging, the live output's server-sent events, the security headers
 * and bad input. The browser's side (scripts, keys) is e2e-tests' WorkflowIT, in real Chromium.
 */
@QuarkusTest
@WithTestResource(KafkaTestResource.class)
@WithTestResource(value = PostgresTestResource.class,
        initArgs = @ResourceArg(name = "database", value = "gpucloud_scheduler_test"))
@WithTestResource(TestIssuer.class)
class ConsoleTest {

    static final String XSS = "<script>alert(1)</script>";

    @TestHTTPResource("/")
    URL url;

    ManagedChannel channel;
    HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    String tenant;
    String member;
    String model;
    String nodeId;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(url.getHost(), url.getPort()).usePlaintext().build();
        String run = UUID.randomUUID().toString().substring(0, 8);
        tenant = "t-" + run + "c";
        model = "CONSOLE-" + run;
        nodeId = "node-console-" + run;
        member = TestIssuer.token("alice", List.of(tenant), List.of("member"));
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    JobServiceGrpc.JobServiceBlockingStub jobs(String token) {
        return JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(token))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    String submit(String name) {
        return jobs(member).submitJob(SubmitJobRequest.newBuilder().setTenant(tenant)
                .setClientRequestId(UUID.randomUUID().toString()).setSpec(JobSpec.newBuilder().setName(name)
                        .setWorkers(1).setGpusPerWorker(1).addGpuModels(model).addCommand("python")
                        .addCommand("train.py")).build()).getJob().getJobId();
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Cookie", ConsoleSession.COOKIE + "=" + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String form, String origin) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form));
        if (origin != null) {
            b.header("Origin", origin);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    String base() {
        return "http://" + url.getHost() + ":" + url.getPort();
    }

    @Test
    void without_a_session_every_page_goes_to_the_login_page() throws Exception {
        for (String path : List.of("/console/jobs", "/console/jobs/job-x", "/console/tenant", "/console/jobs/job-x/logs")) {
            HttpResponse<String> r = get(path, null);
            assertThat(r.statusCode()).as(path).isEqualTo(303);
            assertThat(r.headers().firstValue("Location")).as(path).hasValue("/console/login?m=signin");
        }
        HttpResponse<String> login = get("/console/login?m=signin", null);
        assertThat(login.statusCode()).isEqualTo(200);
        assertThat(login.body()).contains("Sign in to see your jobs.", "action=\"/console/session\"");
        // the query picks a fixed message: it cannot put text of its own on the page
        assertThat(get("/console/login?m=" + XSS.replace("<", "%3C").replace(">", "%3E"), null).body())
                .doesNotContain("<script>alert");
    }

    @Test
    void a_valid_token_starts_a_session_in_a_strict_http_only_cookie_and_logout_ends_it() throws Exception {
        HttpResponse<String> r = post("/console/session", "token=" + member, base());
        assertThat(r.statusCode()).isEqualTo(303);
        assertThat(r.headers().firstValue("Location")).hasValue("/console/jobs");
        String cookie = r.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).startsWith(ConsoleSession.COOKIE + "=" + member).containsIgnoringCase("HttpOnly").contains("SameSite=Strict",
                "Path=/console", "Max-Age=");
        assertThat(cookie).doesNotContain("Secure"); // plain HTTP here; over TLS it is Secure
        long maxAge = Long.parseLong(cookie.replaceAll(".*Max-Age=(\\d+).*", "$1"));
        assertThat(maxAge).as("the cookie expires with the token (an hour)").isBetween(3000L, 3600L);

        HttpResponse<String> out = post("/console/logout", "", base());
        assertThat(out.statusCode()).isEqualTo(303);
        assertThat(out.headers().firstValue("Location")).hasValue("/console/login?m=out");
        assertThat(out.headers().firstValue("Set-Cookie").orElseThrow()).contains("Max-Age=0");
    }

    @Test
    void bad_expired_and_foreign_tokens_do_not_sign_in_and_a_session_whose_token_fails_goes_back_to_login()
            throws Exception {
        DevIssuer issuer = TestIssuer.issuer();
        Instant now = Instant.now();
        var expiredClaims = issuer.claims("alice", List.of(tenant), List.of("member"), now.minus(Duration.ofHours(2)),
                Duration.ofHours(1));
        String expired = issuer.sign(expiredClaims);
        String foreignKey = DevIssuer.inMemory(issuer.issuer()).mint("alice", List.of(tenant), List.of("member"),
                Duration.ofHours(1));
        var otherIssuerClaims = issuer.claims("alice", List.of(tenant), List.of("member"), now, Duration.ofHours(1));
        otherIssuerClaims.setIssuer("https://evil.example");
        String otherIssuer = issuer.sign(otherIssuerClaims);
        for (String bad : List.of("garbage", expired, foreignKey, otherIssuer)) {
            HttpResponse<String> r = post("/console/session", "token=" + bad, base());
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.headers().firstValue("Set-Cookie")).isEmpty();
            assertThat(r.body()).contains("That token does not sign in").doesNotContain(bad);
            HttpResponse<String> page = get("/console/jobs", bad);
            assertThat(page.statusCode()).isEqualTo(303);
            assertThat(page.headers().firstValue("Location")).hasValue("/console/login?m=expired");
            assertThat(page.headers().firstValue("Set-Cookie").orElseThrow()).contains("Max-Age=0");
        }
        // a sign-in from another site's page, or with no origin at all, is refused: no login CSRF
        assertThat(post("/console/session", "token=" + member, "https://evil.example").statusCode()).isEqualTo(403);
        assertThat(post("/console/session", "token=" + member, null).statusCode()).isEqualTo(403);
        assertThat(post("/console/logout", "", "https://evil.example").statusCode()).isEqualTo(403);
        assertThat(post("/console/session", "token=", base()).statusCode()).isEqualTo(400);
        assertThat(post("/console/session", "token=" + "x".repeat(5000), base()).statusCode()).isEqualTo(400);
    }

    @Test
    void a_member_sees_its_tenants_jobs_with_why_they_wait_escaped_and_another_tenants_job_is_not_found()
            throws Exception {
        String id = submit(XSS);
        HttpResponse<String> list = get("/console/jobs", member);
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body()).contains("Jobs of " + tenant, id, "PENDING", "&lt;script&gt;alert(1)&lt;/script&gt;")
                .doesNotContain(XSS);
        HttpResponse<String> job = get("/console/jobs/" + id, member);
        assertThat(job.statusCode()).isEqualTo(200);
        assertThat(job.body()).contains(id, "PENDING", "&lt;script&gt;", "python train.py", "Not placed.")
                .doesNotContain(XSS);
        assertThat(job.body().replaceAll("(?s).*<p class=\"why\" id=\"why\">(.*?)</p>.*", "$1")).isNotBlank();

        String other = TestIssuer.token("bob", List.of(tenant + "x"), List.of("member"));
        HttpResponse<String> foreign = get("/console/jobs/" + id, other);
        HttpResponse<String> unknown = get("/console/jobs/job-nosuchjob", other);
        assertThat(foreign.statusCode()).isEqualTo(404);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(foreign.body().replace(id, "ID")).isEqualTo(unknown.body().replace("job-nosuchjob", "ID"));
        assertThat(get("/console/jobs", other).body()).doesNotContain(id);
        assertThat(get("/console/jobs/" + id + "/logs", other).statusCode()).isEqualTo(404);
        // an operator reads any tenant's job, as through the API
        String operator = TestIssuer.token("op", List.of(), List.of("operator"));
        assertThat(get("/console/jobs/" + id, operator).statusCode()).isEqualTo(200);
    }

    @Test
    void the_list_pages_newest_first_and_filters_by_state() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(submit("job-" + i));
        }
        HttpResponse<String> first = get("/console/jobs?size=2", member);
        assertThat(first.body()).contains(ids.get(4), ids.get(3)).doesNotContain(ids.get(2));
        String next = first.body().replaceAll("(?s).*<a href=\"([^\"]*)\" rel=\"next\".*", "$1").replace("&amp;", "&");
        assertThat(next).startsWith("/console/jobs?after=");
        HttpResponse<String> second = get(next, member);
        assertThat(second.body()).contains(ids.get(2), ids.get(1)).doesNotContain(ids.get(4)).contains("First page");
        assertThat(get("/console/jobs?state=RUNNING", member).body()).doesNotContain(ids.get(0))
                .contains("No jobs in this state.");
        assertThat(get("/console/jobs?state=pending", member).body()).contains(ids.get(0));
    }

    @Test
    void bad_input_is_a_clear_400_page_never_a_stack_trace() throws Exception {
        for (String path : List.of("/console/jobs?state=SLEEPING", "/console/jobs?after=" + "A".repeat(600),
                "/console/jobs?after=bm90LW91cnMtYXQtYWxsLXJlYWxseQ", "/console/jobs?size=0",
                "/console/jobs?size=99999", "/console/jobs?tenant=NOT_A_TENANT", "/console/jobs/job%3Cx%3E",
                "/console/jobs/" + "j".repeat(200), "/console/jobs/job-x?rank=-1", "/console/jobs/job-x?stream=both",
                "/console/jobs/job-x/logs?rank=x")) {
            HttpResponse<String> r = get(path, member);
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).as(path).hasValueSatisfying(
                    t -> assertThat(t).startsWith("text/html"));
            assertThat(r.body()).as(path).contains("400 Bad request").doesNotContain("Exception", "\tat ");
        }
        assertThat(get("/console/jobs?state=SLEEPING", member).body()).contains("&#39;state&#39; must be one of");
        assertThat(get("/console/nowhere", member).statusCode()).isEqualTo(404);
    }

    @Test
    void every_page_carries_the_security_headers_and_is_not_cached() throws Exception {
        for (String path : List.of("/console/login", "/console/jobs", "/console/tenant", "/console/jobs/job-nosuch")) {
            HttpResponse<String> r = get(path, member);
            assertThat(r.headers().firstValue("Content-Security-Policy")).as(path).hasValueSatisfying(csp ->
                    assertThat(csp).contains("script-src 'self'", "frame-ancestors 'none'", "default-src 'none'")
                            .doesNotContain("unsafe-inline"));
            assertThat(r.headers().firstValue("X-Content-Type-Options")).as(path).hasValue("nosniff");
            assertThat(r.headers().firstValue("Cache-Control")).as(path).hasValue("no-store");
            assertThat(r.body()).as(path).doesNotContain("<script>"); // scripts come from files only
        }
        assertThat(get("/console/static/console.js", null).statusCode()).isEqualTo(200);
        assertThat(get("/console/static/../application.properties", null).statusCode()).isNotEqualTo(200);
    }

    @Test
    void the_tenant_page_shows_quota_to_its_admins_and_says_when_the_cost_is_unavailable() throws Exception {
        String admin = TestIssuer.token("ann", List.of(tenant), List.of("tenant-admin"));
        HttpResponse<String> page = get("/console/tenant", admin);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("Tenant " + tenant, "Soft quota", "Hard quota", "Queued")
                // billing does not run in this test
                .contains("Cost unavailable: billing cannot be reached");
        HttpResponse<String> asMember = get("/console/tenant", member);
        assertThat(asMember.statusCode()).isEqualTo(200);
        assertThat(asMember.body()).contains("shown to its tenant-admins, finance and operators")
                .doesNotContain("Soft quota");
        String other = TestIssuer.token("bob", List.of(tenant + "x"), List.of("member"));
        assertThat(get("/console/tenant?tenant=" + tenant, other).statusCode()).isEqualTo(403);
    }

    @Test
    void the_live_output_streams_lines_as_they_come_escaped_as_data_and_ends_when_the_job_does() throws Exception {
        TestKafka kafka = new TestKafka();
        try {
            NodeCommand start = running(kafka);
            List<String> events = new CopyOnWriteArrayList<>();
            HttpRequest request = HttpRequest.newBuilder(URI.create(base() + "/console/jobs/" + start.jobId()
                    + "/logs")).header("Cookie", ConsoleSession.COOKIE + "=" + member).build();
            HttpResponse<java.io.InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                    t -> assertThat(t).startsWith("text/event-stream"));
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        if (!line.isEmpty()) {
                            events.add(line);
                        }
                    }
                } catch (java.io.IOException e) {
                    events.add("io: " + e);
                }
            });
            reader.start();
            chunk(kafka, start, JobLogChunk.Stream.STDOUT, false, "step 1");
            await().atMost(Duration.ofSeconds(20)).until(() -> events.stream().anyMatch(e -> e.contains("step 1")));
            chunk(kafka, start, JobLogChunk.Stream.STDERR, false, XSS);
            await().atMost(Duration.ofSeconds(20)).until(() -> events.stream().anyMatch(e -> e.contains("script")));
            kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, start.jobId(), new AllocationEvent(
                    start.allocationId(), start.jobId(), nodeId, AllocationEventType.EXITED, Instant.now(), 0, null,
                    null), "test"));
            chunk(kafka, start, JobLogChunk.Stream.STDOUT, true, "done");
            chunk(kafka, start, JobLogChunk.Stream.STDERR, true);
            reader.join(60_000);
            assertThat(reader.isAlive()).as("the stream ended by itself").isFalse();
            assertThat(events).filteredOn(e -> e.startsWith("data:") && e.contains("\"text\""))
                    .extracting(e -> e.replaceAll(".*\"text\":\"(.*)\".*", "$1"))
                    .containsExactly("step 1", XSS, "done");
            assertThat(events).contains("event: end");
            assertThat(String.join("\n", events)).contains("\"stream\":\"stderr\"");
            // the job page names the stream's address and shows the placement with its host and GPUs
            HttpResponse<String> page = get("/console/jobs/" + start.jobId() + "?stream=stderr", member);
            assertThat(page.body()).contains("data-src=\"/console/jobs/" + start.jobId() + "/logs?stream=stderr\"",
                    nodeId, model);
        } finally {
            kafka.close();
        }
    }

    NodeCommand running(TestKafka kafka) {
        var commands = kafka.tail(Topics.NODE_COMMANDS.name());
        List<GpuDevice> devices = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            devices.add(new GpuDevice(i, nodeId + "-" + i, model, 40_960, null, 0, false, List.of()));
        }
        kafka.send(EventRecords.record(Topics.GPU_INVENTORY, nodeId, new HostInventory(nodeId, nodeId + ".test",
                "p4d.24xlarge", "zone-t", CapacityType.ON_DEMAND, 21_960_000, 96_000, 1_000_000, "a", List.of(),
                devices, List.of(), "simulated", Instant.now()), "test"));
        String operator = TestIssuer.token("op", List.of(), List.of("operator"));
        await().atMost(Duration.ofSeconds(30)).until(() -> ClusterServiceGrpc.newBlockingStub(channel)
                .withCallCredentials(new BearerToken(operator)).withDeadlineAfter(10, TimeUnit.SECONDS)
                .listNodes(ListNodesRequest.newBuilder().setGpuModel(model).build()).getNodesCount() == 1);
        String id = submit("train");
        NodeCommand start = EventRecords.decode(Topics.NODE_COMMANDS,
                commands.next(r -> r.key().equals(nodeId), 1, Duration.ofSeconds(20)).get(0)).payload();
        kafka.send(EventRecords.record(Topics.ALLOCATION_EVENTS, id, new AllocationEvent(start.allocationId(), id,
                nodeId, AllocationEventType.STARTED, Instant.now(), null, null, null), "test"));
        await().atMost(Duration.ofSeconds(20)).until(() -> jobs(member).getJob(GetJobRequest.newBuilder()
                .setJobId(id).build()).getState() == JobState.RUNNING);
        return start;
    }

    private long offset;

    void chunk(TestKafka kafka, NodeCommand start, JobLogChunk.Stream stream, boolean end, String... texts) {
        List<JobLogChunk.Line> lines = new ArrayList<>();
        for (String t : texts) {
            lines.add(JobLogChunk.Line.of(Instant.now(), offset, t, false));
            offset += t.length() + 1;
        }
        kafka.send(EventRecords.record(Topics.JOB_LOGS, start.jobId(), new JobLogChunk(start.jobId(),
                start.allocationId(), start.tenant(), nodeId, start.rank(), stream, lines, end),
                "/node-agent/" + nodeId));
    }
}
