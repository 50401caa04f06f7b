package dev.gpucloud.bench;

import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.identity.BearerToken;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Driver of {@code benchmarks/scheduler-restart.sh}, which restarts a scheduler that holds many running
 * allocations. Two steps, the script stopping and starting the scheduler in between:
 *
 * <ul>
 *   <li>{@code fill}: waits for the fleet, submits {@code --count} 1-GPU jobs of {@code sleep
 *       --run-seconds} over gRPC (a unique client_request_id each, so a retried submission is never a
 *       second job) and waits until the database shows that many allocations RUNNING.</li>
 *   <li>{@code probe}: started right after the kill, with the kill's and the new process's times.
 *       Polls readiness, submits a probe job until the new scheduler accepts it, polls until it leaves
 *       PENDING, lets the system settle, then reads the scheduler log's takeover lines and the
 *       aftermath ({@link RestartAftermath}) and prints one table, also appended to {@code --out} as
 *       tab-separated "figure, value" rows.</li>
 * </ul>
 */
public final class SchedulerRestart {

    private static final Pattern TOOK_OVER = Pattern.compile("took over in (\\d+) ms: (.*)");
    private static final Pattern LOG_TIME = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d\\d\\d) ");
    private static final Pattern SHED = Pattern.compile("(?m)^gpucloud_agent_telemetry_shed_total(?:\\{[^}]*\\})? ([0-9.eE+]+)$");

    private final Map<String, String> o;
    private final ManagedChannel channel;

    private SchedulerRestart(Map<String, String> options) {
        this.o = options;
        this.channel = channel(opt("target"));
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        if (args.length < 1 || args.length % 2 == 0 || !(args[0].equals("fill") || args[0].equals("probe"))) {
            System.err.println("""
                    usage: SchedulerRestart fill --target H:P --tenant T --count N --jdbc URL [--db-user U --db-password P]
                             [--run-seconds 1800] [--channels 4] [--inflight 64] [--node-prefix P --wait-hosts N]
                             [--queued N (jobs that stay queued: no host has their GPU model)]
                             [--fill-timeout 1800]
                           SchedulerRestart probe --target H:P --bootstrap H:P --tenant T --probe-tenant T2 --jdbc URL
                             --kill-ms MS --exited-ms MS --start-ms MS --ready-url URL --log FILE --label L
                             [--signal KILL] [--running-before N] [--settle 90] [--probe-timeout 300] [--out FILE]
                             [--agent-metrics URL,URL]""");
            System.exit(2);
        }
        Map<String, String> m = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                System.err.println("error: expected --name value pairs, got '" + args[i] + "'");
                System.exit(2);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        SchedulerRestart driver = new SchedulerRestart(m);
        try {
            if (args[0].equals("fill")) {
                driver.fill();
            } else {
                driver.probe();
            }
        } finally {
            driver.channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    // ---------------------------------------------------------------- fill

    private void fill() throws Exception {
        int count = integer("count", 10_000);
        waitForHosts(opt("node-prefix", ""), integer("wait-hosts", 0));
        JobSpec spec = JobSpec.newBuilder().setName("restart-bench").setWorkers(1).setGpusPerWorker(1)
                .addCommand("sleep").addCommand(opt("run-seconds", "1800")).build();
        long t0 = System.nanoTime();
        long accepted = submitAll(count, spec, opt("tenant"), opt("tenant") + "-");
        waitRunning(accepted, t0);
        int queued = integer("queued", 0);
        if (queued > 0) {
            // a queue that stays: every pass, and the first pass after each restart, goes over all of it
            JobSpec waiting = JobSpec.newBuilder().setName("restart-bench-queued").setWorkers(1).setGpusPerWorker(1)
                    .addGpuModels(QUEUED_MODEL).addCommand("sleep").addCommand("1").build();
            // of a tenant of their own, so that the aftermath (one tenant's running jobs) does not count them
            submitAll(queued, waiting, opt("tenant") + "-queue", opt("tenant") + "-queued-");
        }
    }

    /** A GPU model no simulated host has: the queued jobs' reason is that, and it does not change. */
    static final String QUEUED_MODEL = "B200-NOT-IN-THIS-FLEET";

    /**
     * Submits {@code count} copies of {@code spec} for {@code tenant} (request ids {@code prefix + n}); answers how many
     * were accepted.
     */
    private long submitAll(int count, JobSpec spec, String tenant, String prefix) throws Exception {
        int inflight = integer("inflight", 64);
        List<ManagedChannel> channels = new ArrayList<>();
        for (int i = 0; i < integer("channels", 4); i++) {
            channels.add(channel(opt("target")));
        }
        ScheduledExecutorService retryTimer = Executors.newSingleThreadScheduledExecutor();
        Semaphore window = new Semaphore(inflight);
        AtomicLong accepted = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong retried = new AtomicLong();
        long t0 = System.nanoTime();
        System.out.printf(Locale.ROOT, "fill: submitting %d 1-GPU jobs of '%s' as tenant %s, %d in flight%n",
                count, String.join(" ", spec.getCommandList()), tenant, inflight);
        try {
            for (int n = 0; n < count; n++) {
                window.acquire();
                SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(tenant)
                        .setClientRequestId(prefix + n).setSpec(spec).build();
                new Object() {
                    void send(int attempt) {
                        JobServiceGrpc.newStub(channels.get(attempt % channels.size()))
                                .withDeadlineAfter(60, TimeUnit.SECONDS)
                                .submitJob(request, new StreamObserver<SubmitJobResponse>() {
                                    public void onNext(SubmitJobResponse r) {
                                        accepted.incrementAndGet();
                                    }

                                    public void onError(Throwable t) {
                                        if (attempt < 30) { // the same client_request_id: never a second job
                                            retried.incrementAndGet();
                                            retryTimer.schedule(() -> send(attempt + 1), 1, TimeUnit.SECONDS);
                                            return;
                                        }
                                        failed.incrementAndGet();
                                        System.err.println("fill: gave up on " + request.getClientRequestId() + ": "
                                                + Status.fromThrowable(t));
                                        window.release();
                                    }

                                    public void onCompleted() {
                                        window.release();
                                    }
                                });
                    }
                }.send(0);
            }
            window.acquire(inflight);
        } finally {
            retryTimer.shutdownNow();
            for (ManagedChannel c : channels) {
                c.shutdownNow();
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "fill: %d accepted in %.1f s (%.0f jobs/s), %d retried submissions, %d given up%n",
                accepted.get(), secs, accepted.get() / secs, retried.get(), failed.get());
        return accepted.get();
    }

    /** A channel to the scheduler, with the token the script hands over (GPUCLOUD_TOKEN): authentication is on. */
    private static ManagedChannel channel(String target) {
        ManagedChannelBuilder<?> builder = ManagedChannelBuilder.forTarget(target).usePlaintext();
        String token = System.getenv("GPUCLOUD_TOKEN");
        if (token != null && !token.isBlank()) {
            builder.intercept(new BearerToken(token).interceptor());
        }
        return builder.build();
    }

    private void waitForHosts(String prefix, int want) throws InterruptedException {
        if (want <= 0) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        long seen = 0;
        while (System.nanoTime() < deadline) {
            try {
                seen = ClusterServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .listNodes(ListNodesRequest.getDefaultInstance()).getNodesList().stream()
                        .filter(n -> n.getNodeId().startsWith(prefix) && n.getHealthy()).count();
                if (seen >= want) {
                    System.out.printf(Locale.ROOT, "fleet: %d healthy hosts with prefix '%s'%n", seen, prefix);
                    return;
                }
            } catch (StatusRuntimeException e) {
                // still starting
            }
            Thread.sleep(1000);
        }
        throw new IllegalStateException("only " + seen + " of " + want + " hosts were healthy after 5 minutes");
    }

    /** Waits until {@code want} allocations of the tenant are RUNNING in the scheduler's tables. */
    private void waitRunning(long want, long t0) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(integer("fill-timeout", 1800));
        long lastPrint = 0;
        Connection db = null;
        try {
            while (true) {
                long running;
                try {
                    if (db == null) {
                        db = connect();
                    }
                    running = runningAllocations(db, opt("tenant"));
                } catch (SQLException e) { // the shared database restarted, say: ask again
                    System.err.println("fill: could not count (" + e.getMessage() + "); asking again");
                    closeQuietly(db);
                    db = null;
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(2000);
                    continue;
                }
                long now = System.nanoTime();
                if (running >= want) {
                    System.out.printf(Locale.ROOT, "fill: %d allocations RUNNING %.1f s after the first submission%n",
                            running, (now - t0) / 1e9);
                    return;
                }
                if (now > deadline) {
                    throw new IllegalStateException("only " + running + " of " + want + " allocations RUNNING after "
                            + opt("fill-timeout", "1800") + " s");
                }
                if (now - lastPrint > TimeUnit.SECONDS.toNanos(15)) {
                    System.out.printf(Locale.ROOT, "fill: %d of %d RUNNING (%.0f s)%n", running, want, (now - t0) / 1e9);
                    lastPrint = now;
                }
                Thread.sleep(2000);
            }
        } finally {
            closeQuietly(db);
        }
    }

    private static void closeQuietly(Connection db) {
        try {
            if (db != null) {
                db.close();
            }
        } catch (SQLException e) {
            // already gone
        }
    }

    // ---------------------------------------------------------------- probe

    private void probe() throws Exception {
        long killMs = longOpt("kill-ms");
        long startMs = longOpt("start-ms");
        AtomicLong readyMs = new AtomicLong();
        Thread readiness = new Thread(() -> readyMs.set(pollReady(opt("ready-url"))), "readiness");
        readiness.setDaemon(true);
        readiness.start();

        // The probe: one 1-GPU job of another tenant, sent until the new scheduler accepts it.
        JobSpec spec = JobSpec.newBuilder().setName("restart-probe").setWorkers(1).setGpusPerWorker(1)
                .addCommand("sleep").addCommand("1800").build();
        SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(opt("probe-tenant"))
                .setClientRequestId(opt("probe-tenant") + "-" + opt("label")).setSpec(spec).build();
        var jobs = JobServiceGrpc.newBlockingStub(channel);
        Map<String, Integer> refusals = new LinkedHashMap<>();
        String jobId = null;
        long acceptedMs = 0;
        long giveUp = System.currentTimeMillis() + 300_000;
        while (jobId == null) {
            try {
                jobId = jobs.withDeadlineAfter(5, TimeUnit.SECONDS).submitJob(request).getJob().getJobId();
                acceptedMs = System.currentTimeMillis();
            } catch (StatusRuntimeException e) {
                refusals.merge(e.getStatus().getCode().name(), 1, Integer::sum);
                if (System.currentTimeMillis() > giveUp) {
                    throw new IllegalStateException("the probe was not accepted in 300 s: " + refusals, e);
                }
                Thread.sleep(100);
            }
        }
        // Until it leaves PENDING, or --probe-timeout after the stop: a scheduler that does not place is a finding too.
        long placeBy = killMs + TimeUnit.SECONDS.toMillis(integer("probe-timeout", 300));
        Job placed = null;
        Job last = null;
        long placedSeenMs = 0;
        while (placed == null && System.currentTimeMillis() < placeBy) {
            try {
                last = jobs.withDeadlineAfter(5, TimeUnit.SECONDS).getJob(GetJobRequest.newBuilder().setJobId(jobId).build());
                if (last.getState() != JobState.PENDING && last.getState() != JobState.JOB_STATE_UNSPECIFIED) {
                    placed = last;
                    placedSeenMs = System.currentTimeMillis();
                }
            } catch (StatusRuntimeException e) {
                // a moment of the restart; ask again
            }
            if (placed == null) {
                Thread.sleep(50);
            }
        }
        readiness.join(TimeUnit.MINUTES.toMillis(5));

        int settle = integer("settle", 90);
        System.out.printf(Locale.ROOT, "%s: probe %s %s; letting the system settle for %d s%n", opt("label"), jobId,
                placed != null ? "placed" : "NOT placed by the probe timeout", settle);
        Thread.sleep(TimeUnit.SECONDS.toMillis(settle));

        List<String[]> rows = new ArrayList<>();
        try (Connection db = connect()) {
            Long createdMs = probeAllocationCreated(db, jobId);
            RestartAftermath after = RestartAftermath.read(db, opt("bootstrap"), opt("tenant"), killMs);
            long runningNow = runningAllocations(db, opt("tenant"));
            String log = Files.readString(Path.of(opt("log")), StandardCharsets.UTF_8);
            Matcher took = TOOK_OVER.matcher(log);
            boolean tookOver = took.find();
            Long leadsMs = firstLineAt(log, " leads now (epoch", killMs);
            List<Long> joins = linesAt(log, " joined: ", killMs);

            row(rows, "stop signal", "SIG" + opt("signal", "KILL"));
            row(rows, "allocations RUNNING at the stop", opt("running-before", "?"));
            row(rows, "stop -> old process gone", ms(longOpt("exited-ms") - killMs));
            row(rows, "new process start -> ready (/q/health/ready 200)", readyMs.get() == 0 ? "not in 300 s"
                    : ms(readyMs.get() - startMs));
            row(rows, "new process start -> leads (log)", leadsMs == null ? "not found" : ms(leadsMs - startMs));
            row(rows, "new process start -> hosts re-read from gpu.inventory (log 'joined')", joins.isEmpty() ? "none"
                    : joins.size() + " hosts, the first after " + ms(joins.get(0) - startMs) + ", the last after "
                            + ms(joins.get(joins.size() - 1) - startMs));
            row(rows, "takeover: state rebuilt (log 'took over in')", tookOver ? took.group(1) + " ms" : "not found");
            row(rows, "restored (log)", tookOver ? took.group(2) : "not found");
            row(rows, "stop -> probe accepted", ms(acceptedMs - killMs) + " (" + sum(refusals) + " refused tries: "
                    + RestartAftermath.counts(refusals) + ")");
            row(rows, "stop -> probe placed (allocation created)", createdMs == null ? "?" : ms(createdMs - killMs));
            if (placed != null) {
                row(rows, "stop -> probe seen " + placed.getState().name() + " by GetJob", ms(placedSeenMs - killMs));
                row(rows, "probe placed on", placed.getPlacementCount() == 0 ? "?" : placed.getPlacement(0).getNodeId());
            } else {
                row(rows, "stop -> probe seen placed by GetJob", "NOT placed " + ms(placeBy - killMs) + " after the stop"
                        + (last == null ? "" : " (" + last.getState().name() + ": " + last.getReason() + ")"));
                row(rows, "probe placed on", "-");
            }
            row(rows, "settled for", settle + " s after the probe was " + (placed != null ? "placed" : "given up on"));
            row(rows, "jobs of the tenant / allocations RUNNING now", after.jobs() + " / " + runningNow);
            row(rows, "DISTURBED jobs (not RUNNING, attempt > 1, allocation ended, or STOP)",
                    String.valueOf(after.disturbed().size()));
            row(rows, "  job states now", RestartAftermath.counts(after.jobStates()));
            row(rows, "  jobs placed again (attempt > 1, cumulative)", String.valueOf(after.replaced()));
            row(rows, "  allocations ended since the stop", RestartAftermath.counts(after.endedAllocations()));
            row(rows, "  of them refused/could not start (exit 125)", String.valueOf(after.refusedStarts()));
            row(rows, "  node.commands to the tenant's jobs since the stop", RestartAftermath.counts(after.commandsToTenant()));
            row(rows, "node.commands since the stop (all)", RestartAftermath.counts(after.commands()));
            row(rows, "job.events of the tenant since the stop", RestartAftermath.counts(after.jobEvents()));
            row(rows, "allocation.events of the tenant's jobs since the stop",
                    RestartAftermath.counts(after.allocationEvents()));
            row(rows, "log: allocations lost (host silent / not re-read)", lostReasons(log));
            row(rows, "agents' telemetry samples shed (cumulative)", shed(opt("agent-metrics", "")));
            row(rows, "PostgreSQL restarted during the round (by something else)", postgresRestartedSince(db, killMs));
            if (!after.disturbed().isEmpty()) {
                row(rows, "  some disturbed jobs", String.join(" ", after.disturbed().stream().sorted().limit(5).toList()));
            }
        }
        print(rows);
        if (o.containsKey("out")) {
            StringBuilder sb = new StringBuilder();
            rows.forEach(r -> sb.append(r[0]).append('\t').append(r[1]).append('\n'));
            Files.writeString(Path.of(opt("out")), sb, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING);
        }
    }

    /** Polls readiness every 100 ms for up to 5 minutes; the wall-clock time of its first 200, or 0. */
    private static long pollReady(String url) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest get = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).GET().build();
        long giveUp = System.currentTimeMillis() + 300_000;
        while (System.currentTimeMillis() < giveUp) {
            try {
                if (http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return System.currentTimeMillis();
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 0;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return 0;
            }
        }
        return 0;
    }

    /** The wall-clock time of the first log line containing {@code text}, or null. */
    private static Long firstLineAt(String log, String text, long nearMs) {
        List<Long> at = linesAt(log, text, nearMs);
        return at.isEmpty() ? null : at.get(0);
    }

    /** The wall-clock times of the log lines containing {@code text}, in order. */
    private static List<Long> linesAt(String log, String text, long nearMs) {
        List<Long> times = new ArrayList<>();
        for (String line : log.split("\n")) {
            if (line.contains(text)) {
                Matcher m = LOG_TIME.matcher(line);
                if (m.find()) {
                    times.add(wallClock(LocalTime.parse(m.group(1)), nearMs));
                }
            }
        }
        return times;
    }

    /** A log time of day (this machine's zone) as wall-clock millis, on the day that puts it nearest {@code nearMs}. */
    private static long wallClock(LocalTime t, long nearMs) {
        ZoneId zone = ZoneId.systemDefault();
        LocalDate day = java.time.Instant.ofEpochMilli(nearMs).atZone(zone).toLocalDate();
        long best = Long.MAX_VALUE;
        for (int d = -1; d <= 1; d++) { // should midnight fall between
            long at = t.atDate(day.plusDays(d)).atZone(zone).toInstant().toEpochMilli();
            if (Math.abs(at - nearMs) < Math.abs(best - nearMs)) {
                best = at;
            }
        }
        return best;
    }

    /** The scheduler log's "was lost (...)" lines, counted by kind of reason. */
    private static String lostReasons(String log) {
        Map<String, Integer> reasons = new java.util.TreeMap<>();
        for (String line : log.split("\n")) {
            if (line.contains(" was lost (")) {
                String kind = line.contains("has not reported since the scheduler began") ? "host not yet re-read"
                        : line.contains("nothing heard since the scheduler began") ? "host not heard since the start"
                        : line.contains(" silent for ") ? "host silent" : "other";
                reasons.merge(kind, 1, Integer::sum);
            }
        }
        return RestartAftermath.counts(reasons);
    }

    /** The sum of gpucloud_agent_telemetry_shed_total over the agents' /q/metrics URLs (comma-separated). */
    private static String shed(String urls) {
        if (urls.isBlank()) {
            return "?";
        }
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<String> each = new ArrayList<>();
        long total = 0;
        for (String url : urls.split(",")) {
            try {
                String body = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                Matcher m = SHED.matcher(body);
                long n = m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
                total += n;
                each.add(String.valueOf(n));
            } catch (IOException | InterruptedException e) {
                each.add("?");
            }
        }
        return total + " (" + String.join(" + ", each) + ")";
    }

    private static Long probeAllocationCreated(Connection db, String jobId) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("select min(created_at) from allocations where job_id = ?")) {
            q.setString(1, jobId);
            try (ResultSet r = q.executeQuery()) {
                Timestamp t = r.next() ? r.getTimestamp(1) : null;
                return t == null ? null : t.getTime();
            }
        }
    }

    /** Whether the database server started after {@code sinceMs}: the shared PostgreSQL restarted under the round. */
    private static String postgresRestartedSince(Connection db, long sinceMs) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("select pg_postmaster_start_time()");
                ResultSet r = q.executeQuery()) {
            r.next();
            Timestamp started = r.getTimestamp(1);
            return started.getTime() > sinceMs ? "YES, at " + started.toInstant() + ": the figures are not the restart's alone"
                    : "no";
        }
    }

    private static long runningAllocations(Connection db, String tenant) throws SQLException {
        try (PreparedStatement q = db.prepareStatement("select count(*) from allocations a join jobs j"
                + " on j.id = a.job_id where j.tenant = ? and a.state = 'RUNNING'")) {
            q.setString(1, tenant);
            try (ResultSet r = q.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        }
    }

    // ---------------------------------------------------------------- plumbing

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(opt("jdbc"), opt("db-user", "gpucloud"), opt("db-password", "gpucloud"));
    }

    private static void row(List<String[]> rows, String figure, String value) {
        rows.add(new String[] {figure, value});
    }

    private void print(List<String[]> rows) {
        int w = rows.stream().mapToInt(r -> r[0].length()).max().orElse(10);
        System.out.println();
        System.out.println("restart " + opt("label") + ":");
        for (String[] r : rows) {
            System.out.printf(Locale.ROOT, "  %-" + w + "s  %s%n", r[0], r[1]);
        }
    }

    private static String ms(long millis) {
        return String.format(Locale.ROOT, "%,d ms", millis);
    }

    private static int sum(Map<String, Integer> m) {
        return m.values().stream().mapToInt(Integer::intValue).sum();
    }

    private String opt(String key) {
        String v = o.get(key);
        if (v == null) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    private String opt(String key, String dflt) {
        return o.getOrDefault(key, dflt);
    }

    private int integer(String key, int dflt) {
        return Integer.parseInt(opt(key, String.valueOf(dflt)));
    }

    private long longOpt(String key) {
        return Long.parseLong(opt(key));
    }
}
