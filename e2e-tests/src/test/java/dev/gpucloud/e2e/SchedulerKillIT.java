package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.grpc.v1.CancelJobRequest;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Gpu;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import dev.gpucloud.contracts.paging.NodePages;
import dev.gpucloud.identity.BearerToken;
import dev.gpucloud.identity.DevIssuer;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Crash recovery of the scheduler, as a black box. Starts a private Kafka broker, a simulated fleet,
 * two instances of the scheduler-service jar and the billing-service jar as child processes (their
 * tables in a schema of their own in gpucloud_scheduler_test and gpucloud_billing_test), submits a long
 * job and then a stream of jobs over gRPC (1 GPU, a MIG slice, 8 GPUs, 2-worker RDMA gangs; a few
 * cancelled), injects the {@link Fault}s at seeded random points under that load, then lets the system
 * settle and checks, through the databases, gRPC, billing's REST API and the agent:
 *
 * <ul>
 *   <li>nothing running was disturbed: no job ran twice (every job ends on attempt 1), none FAILED,
 *       the agent never refused a START (a GPU busy with another allocation), and the long job that
 *       ran across every restart SUCCEEDED on its first attempt. The agent republishes its inventory
 *       rarely here and the scheduler's host-lost timeout is short, so a scheduler that measured a
 *       host's silence from the last inventory record instead of from its own start would lose every
 *       running allocation at the second restart;</li>
 *   <li>no GPU held twice over the whole history: per whole GPU, the allocations' intervals from
 *       creation to end never overlap, ended ones included;</li>
 *   <li>no job lost: every SubmitJob that returned OK is found by GetJob, in the jobs table, and a
 *       repeat of its request returns the same job;</li>
 *   <li>none placed twice: no job holds active allocations of two attempts, or two of one rank; no
 *       GPU is held by two active allocations; the agent runs nothing the scheduler thinks ended;</li>
 *   <li>no allocation leaked: an active allocation belongs to a SCHEDULED, RUNNING or CHECKPOINTING
 *       job, on its current attempt; the scheduler's in-memory view of the GPUs matches the table;
 *       the outbox drains; every accepted job ends;</li>
 *   <li>billed once ({@link KillTestBilling}): once billing has stored usage.events to its end, every
 *       allocation that started is billed, for exactly as long as its command ran, at least the 60 s
 *       minimum, times its units; nothing is billed that the scheduler never made; no job is billed for
 *       allocations of two attempts, so a fault never makes a tenant pay a second minimum.</li>
 * </ul>
 *
 * The seed is printed; {@code -Dgpucloud.killtest.seed=N} replays the same kill points, and
 * {@code -Dgpucloud.killtest.scheduler-app=DIR} runs another build of the scheduler (a quarkus-app folder).
 */
class SchedulerKillIT {

    /** Two scheduler instances, an active leader and a standby (the ports of scheduler-0 and scheduler-1). */
    static final int PORTS = Integer.getInteger("gpucloud.killtest.port-base", 18280); // another base runs a second copy
    static final int[] SCHEDULERS = {PORTS + 1, PORTS + 11};
    static final int KAFKA = PORTS + 2;
    static final int KAFKA_CONTROLLER = PORTS + 3;
    static final int AGENT = PORTS + 4;
    static final int BILLING = PORTS + 5;
    /** Whole-GPU a100x8 hosts ({@code -Dgpucloud.killtest.hosts}), plus two in MIG mode. */
    static final int HOSTS = Integer.getInteger("gpucloud.killtest.hosts", 16);
    static final int MIG_HOSTS = 2;
    /**
     * One H100 host that only the probes ask for. The load keeps the A100s nearly full, and backfill keeps a
     * queued job off GPUs reserved for the head of the queue, so a probe placed on the A100s would measure
     * the queue, not the scheduler's return after a fault.
     */
    static final String PROBE_MODEL = "H100-SXM5-80GB";
    static final String LOAD_MODEL = "A100-SXM4-40GB";
    static final int MAX_JOBS = 160;
    /**
     * The kinds of fault: kill -9, SIGTERM and SIGSTOP (past its lease, then SIGCONT) of the leader of the
     * moment; kill -9 of the broker; a restart of PostgreSQL; kill -9 of both instances at once; kill -9 of
     * billing-service.
     */
    enum Fault { KILL_LEADER, SIGTERM_LEADER, SIGSTOP_LEADER, KILL_BROKER, RESTART_DATABASE, KILL_BOTH, KILL_BILLING }

    /**
     * How many faults: every kind once, in the enum's order, then kinds drawn from the seed
     * ({@code -Dgpucloud.killtest.faults=20} for the long run). {@code -Dgpucloud.killtest.kinds=RESTART_DATABASE}
     * (a comma-separated list) draws only those kinds, each of them first: to hammer one fault.
     */
    static final int FAULT_COUNT = Integer.getInteger("gpucloud.killtest.faults", Fault.values().length);
    static final List<Fault> KINDS = System.getProperty("gpucloud.killtest.kinds", "").isBlank()
            ? List.of(Fault.values())
            : java.util.Arrays.stream(System.getProperty("gpucloud.killtest.kinds").split(","))
                    .map(k -> Fault.valueOf(k.trim())).toList();

    static List<Fault> faults(int count, List<Fault> kinds, Random random) {
        List<Fault> faults = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            faults.add(i < kinds.size() ? kinds.get(i) : kinds.get(random.nextInt(kinds.size())));
        }
        return faults;
    }
    /** The schedulers' leader lease (their default): a paused leader is paused longer than this. */
    static final long LEASE_MILLIS = 3000;
    static final long SEED = Long.getLong("gpucloud.killtest.seed", System.nanoTime());
    static final List<Fault> FAULTS = faults(FAULT_COUNT, KINDS, new Random(SEED ^ 0x5eed));
    static final String RUN_ID = UUID.randomUUID().toString().replace("-", "").substring(0, 6);
    static final String TENANT = "kill-" + RUN_ID;
    /**
     * Authentication stays on, as shipped: the services find this development issuer through discovery, and
     * every call of the test carries its token (member of the load's and the probes' tenants, and operator).
     */
    static final DevIssuer ISSUER = startIssuer();
    static final String TOKEN = ISSUER.mint("killtest", List.of(TENANT, TENANT + "-probe"),
            List.of("member", "operator"), Duration.ofHours(12));
    static final String NODE_PREFIX = "k" + RUN_ID;
    static final String SCHEMA = "killtest_" + RUN_ID;
    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path RUN_DIR = ROOT.resolve("e2e-tests/target/killtest-run");
    static final String PG = System.getenv().getOrDefault("PGHOST", "localhost") + ":"
            + System.getenv().getOrDefault("PGPORT", "5432");
    static final String DB = "gpucloud_scheduler_test";
    static final String JDBC = "jdbc:postgresql://" + PG + "/" + DB;
    static final String DB_USER = System.getenv().getOrDefault("GPUCLOUD_DB_USER", "gpucloud");
    static final String DB_PASSWORD = System.getenv().getOrDefault("GPUCLOUD_DB_PASSWORD", "gpucloud");
    static final Set<String> LIVE = Set.of("SCHEDULED", "RUNNING", "CHECKPOINTING");
    static final Set<String> FINAL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final Path SCHEDULER_APP = RUN_DIR.resolve("apps/scheduler-service");
    static final Path AGENT_APP = RUN_DIR.resolve("apps/node-agent");
    static final Path BILLING_APP = RUN_DIR.resolve("apps/billing-service");
    /**
     * How long the long job and the probes run ({@code sleep N}): billing must count exactly that. The long
     * job outlasts every fault; a kill of billing does not touch the scheduler, so it adds no time.
     */
    static final int LONG_JOB_SECONDS = 40 + 25 * (int) FAULTS.stream().filter(f -> f != Fault.KILL_BILLING).count();
    static final int PROBE_SECONDS = 1;

    static Process agent;
    static Process billing;
    static int billingStarts;
    static final Process[] schedulers = new Process[2];
    static int schedulerStarts;
    static final ManagedChannel[] channels = new ManagedChannel[2];
    /** The instance clients try first: the leader as last found. */
    static volatile int preferred;
    /** Fault to first placement after it (ms), every one, by kind of fault. */
    static final Map<Fault, List<Long>> gaps = new java.util.EnumMap<>(Fault.class);
    static boolean kafkaStarted;
    static boolean schemaCreated;
    static boolean billingSchemaCreated;

    @BeforeAll
    static void up() throws Exception {
        Files.createDirectories(RUN_DIR.resolve("logs"));
        log("seed " + SEED + " (replay with -Dgpucloud.killtest.seed=" + SEED + "), run " + RUN_ID);
        requireFreePorts();
        Runtime.getRuntime().addShutdownHook(new Thread(SchedulerKillIT::killChildren));
        deleteTree(RUN_DIR.resolve("kafka/data")); // a fresh broker: no offsets or topics from an earlier run
        deleteTree(RUN_DIR.resolve("agent-spool")); // and an agent with nothing an earlier run left unsent
        kafka("start");
        kafkaStarted = true;
        try (Connection c = db(null); Statement st = c.createStatement()) {
            st.execute("create schema " + SCHEMA);
            schemaCreated = true;
        }
        try (Connection c = billingDb(null); Statement st = c.createStatement()) {
            st.execute("create schema " + SCHEMA);
            billingSchemaCreated = true;
        }
        // Copies of the built services, so that a rebuild during the test cannot change them under it.
        copyTree(Path.of(System.getProperty("gpucloud.killtest.scheduler-app",
                ROOT.resolve("scheduler-service/target/quarkus-app").toString())), SCHEDULER_APP);
        copyTree(ROOT.resolve("node-agent/target/quarkus-app"), AGENT_APP);
        copyTree(ROOT.resolve("billing-service/target/quarkus-app"), BILLING_APP);
        // the environment wins over -D for SmallRye's Kafka connector: CI exports the shared broker there
        agent = java("agent", AGENT, Map.of("KAFKA_BOOTSTRAP_SERVERS", "localhost:" + KAFKA), List.of(
                "-Dgpucloud.agent.id=killtest-" + RUN_ID,
                "-Dgpucloud.agent.inventory-interval=30m", // gpu.inventory grows stale: liveness must not read it as silence
                "-Dgpucloud.agent.usage-interval=1s", // usage in flight at every fault, for billing to fold once
                "-Dgpucloud.agent.sim.node-prefix=" + NODE_PREFIX,
                "-Dgpucloud.agent.sim.fleet=a100x8:" + HOSTS + ",a100x8-mig:" + MIG_HOSTS + ",h100x8:1",
                "-Dgpucloud.agent.spool.dir=" + RUN_DIR.resolve("agent-spool"),
                "-Dkafka.bootstrap.servers=localhost:" + KAFKA),
                AGENT_APP.resolve("quarkus-run.jar"));
        startBilling();
        startScheduler(0);
        startScheduler(1);
        waitReady("agent", AGENT, agent);
        waitReady("billing", BILLING, billing);
        for (int i = 0; i < 2; i++) {
            channels[i] = ManagedChannelBuilder.forAddress("localhost", SCHEDULERS[i]).usePlaintext()
                    .intercept(new BearerToken(TOKEN).interceptor()).build();
        }
        preferred = leaderIndex(Duration.ofSeconds(30));
        waitForFleet();
    }

    @AfterAll
    static void down() throws Exception {
        for (ManagedChannel c : channels) {
            if (c != null) {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        for (Process p : schedulers) {
            resume(p); // a failed run may leave one paused
            stop(p);
        }
        stop(agent);
        stop(billing);
        if (kafkaStarted) {
            kafka("stop");
            deleteTree(RUN_DIR.resolve("kafka/data"));
        }
        deleteTree(RUN_DIR.resolve("apps"));
        if (schemaCreated) {
            try (Connection c = db(null); Statement st = c.createStatement()) {
                st.execute("drop schema if exists " + SCHEMA + " cascade");
            }
        }
        if (billingSchemaCreated) {
            try (Connection c = billingDb(null); Statement st = c.createStatement()) {
                st.execute("drop schema if exists " + SCHEMA + " cascade");
            }
        }
    }

    @Test
    void no_job_is_lost_placed_twice_or_leaked_across_kill_9() throws Exception {
        Random random = new Random(SEED);
        String longJob = submitLongJob();
        Load load = new Load(random.nextLong());
        load.start();
        List<String> violations = new ArrayList<>();
        int faultNumber = 0;
        for (Fault fault : FAULTS) {
            long delay = 2000 + random.nextInt(7000);
            Thread.sleep(delay);
            int leader = leaderIndex(Duration.ofSeconds(30));
            int standby = 1 - leader;
            log(fault + ": scheduler-" + leader + " (pid " + schedulers[leader].pid() + ") leads; " + delay
                    + " ms after the last fault, " + load.accepted.size() + " jobs accepted so far");
            long at = System.nanoTime();
            Probe probe = new Probe(fault, ++faultNumber);
            int restart = -1;
            long restartAfterMillis = 0;
            switch (fault) {
                case KILL_LEADER, SIGTERM_LEADER -> {
                    probe.start();
                    end(leader, fault == Fault.SIGTERM_LEADER);
                    // its supervisor restarts it on its own machine; here that would take the CPU the standby
                    // needs to take over, so it comes back (as a standby) once the probe was placed
                    restart = leader;
                    restartAfterMillis = random.nextInt(3) == 0 ? 3000 + random.nextInt(5000) : 0;
                }
                case SIGSTOP_LEADER -> {
                    signal(schedulers[leader], "STOP");
                    probe.start();
                    Thread.sleep(LEASE_MILLIS + 3000 + random.nextInt(3000)); // past its lease: the standby leads
                    signal(schedulers[leader], "CONT");
                    log("scheduler-" + leader + " resumed after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at)
                            + " ms paused");
                    // resumed, it finds it was deposed: it stands by, and places, commands and writes nothing
                    if (!becomes(leader, "standby", Duration.ofSeconds(10))) {
                        violations.add("scheduler-" + leader + " still says it leads 10 s after it resumed from a pause"
                                + " past its lease");
                    }
                }
                case KILL_BROKER -> {
                    probe.start();
                    long pid = Long.parseLong(Files.readString(RUN_DIR.resolve("kafka/kafka.pid")).trim());
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                    ProcessHandle.of(pid).ifPresent(h -> h.onExit().join());
                    log("the broker (pid " + pid + ") was killed");
                    Thread.sleep(2000 + random.nextInt(4000));
                    kafka("start");
                }
                case RESTART_DATABASE -> {
                    // the probe comes at a drawn moment of the restart: before it, while the server stops or
                    // starts, or as it is back; a submission in the middle must be answered or retried, never stall
                    long probeAfter = random.nextInt(2500);
                    java.util.concurrent.CompletableFuture<Void> restarting = java.util.concurrent.CompletableFuture
                            .runAsync(() -> {
                                try {
                                    restartDatabase();
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            });
                    Thread.sleep(probeAfter);
                    probe.start();
                    restarting.join();
                    log("RESTART_DATABASE: the probe came " + probeAfter + " ms into the restart");
                }
                case KILL_BOTH -> {
                    probe.start();
                    end(leader, false);
                    end(standby, false);
                    startScheduler(0);
                    startScheduler(1);
                }
                case KILL_BILLING -> {
                    probe.start();
                    billing.destroyForcibly().waitFor();
                    log("billing (pid " + billing.pid() + ") was killed");
                    startBilling(); // its supervisor's restart; usage meanwhile waits on the topic
                }
            }
            for (ManagedChannel c : channels) {
                c.resetConnectBackoff();
            }
            probe.join(TimeUnit.SECONDS.toMillis(90));
            if (fault == Fault.KILL_BILLING) {
                waitReady("billing", BILLING, billing);
            }
            if (restart >= 0) {
                Thread.sleep(restartAfterMillis);
                startScheduler(restart);
                restart = -1;
            }
            if (probe.placedAfterMillis < 0) {
                violations.add(fault + ": no job was placed in 90 s after it (" + probe.diagnosis() + ")");
            } else {
                gaps.computeIfAbsent(fault, k -> new ArrayList<>()).add(probe.placedAfterMillis);
                log(fault + ": first placement after it " + probe.placedAfterMillis + " ms later (the probe saw its job"
                        + " placed after " + probe.seenAfterMillis + " ms)");
            }
        }
        Thread.sleep(3000 + random.nextInt(3000));
        load.stop();
        assertThat(load.errors).as("unexpected SubmitJob answers").isEmpty();
        log(load.accepted.size() + " jobs accepted (" + load.duplicates.get() + " answered duplicate=true after a retry), "
                + load.cancelled.size() + " cancel requests; waiting for them to end");

        boolean settled = settle(load, longJob, Duration.ofSeconds(120 + 25L * FAULT_COUNT));
        preferred = leaderIndex(Duration.ofSeconds(30));

        Map<String, Row> jobs = jobs();
        List<Alloc> active = activeAllocations();
        checkNoneLost(load, jobs, violations);
        checkNonePlacedTwice(active, violations);
        checkNothingRunningDisturbed(load, longJob, jobs, violations);
        checkNoGpuHeldTwiceOverHistory(violations);
        checkNoMigSliceHeldTwiceOverHistory(violations);
        checkNoneLeaked(jobs, active, violations);
        if (settled) {
            // These compare two reads taken at different moments, so they hold only once nothing moves.
            checkSchedulerViewMatchesTable(active, violations);
            checkAgentRunsOnlyActive(active, violations);
            checkBilling(load, longJob, violations);
        }
        long outbox = count("select count(*) from outbox");
        if (outbox > 0) {
            violations.add("outbox still holds " + outbox + " record(s) after settling");
        }
        if (!settled) {
            jobs.values().stream().filter(r -> load.accepted.containsValue(r.id) && !FINAL.contains(r.state)).limit(20)
                    .forEach(r -> violations.add("job " + r.id + " did not end: " + r.state + " attempt " + r.attempt
                            + " (" + r.reason + ")"));
        }
        log(violations.isEmpty() ? "all invariants hold" : violations.size() + " violation(s)");
        gaps.forEach((fault, ms) -> {
            List<Long> sorted = ms.stream().sorted().toList();
            log("fault to first placement, " + fault + ": " + sorted.size() + " fault(s), p50 " + sorted.get(
                    (sorted.size() - 1) / 2) + " ms, max " + sorted.get(sorted.size() - 1) + " ms " + ms);
        });
        assertThat(violations).as("invariants after %s (seed %d, logs in %s)", FAULTS, SEED, RUN_DIR).isEmpty();
    }

    // ---------------------------------------------------------------- the load

    /** Four clients submitting jobs, each retrying its current request (same id) until it gets an answer. */
    static final class Load {
        final Map<String, String> accepted = new ConcurrentHashMap<>();
        final Map<String, SubmitJobRequest> requests = new ConcurrentHashMap<>();
        final Set<String> cancelled = ConcurrentHashMap.newKeySet();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final AtomicInteger duplicates = new AtomicInteger();
        final AtomicInteger sequence = new AtomicInteger();
        final List<Thread> threads = new ArrayList<>();
        final long seed;
        volatile boolean running = true;

        Load(long seed) {
            this.seed = seed;
        }

        void start() {
            for (int t = 0; t < 4; t++) {
                Random random = new Random(seed + t);
                Thread thread = new Thread(() -> submitLoop(random), "load-" + t);
                thread.setDaemon(true);
                thread.start();
                threads.add(thread);
            }
        }

        void stop() throws InterruptedException {
            running = false;
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(150));
            }
        }

        private void submitLoop(Random random) {
            List<String> mine = new ArrayList<>();
            while (running) {
                if (accepted.size() >= MAX_JOBS) { // enough to drain in time; the kills go on regardless
                    sleep(200);
                    continue;
                }
                String requestId = TENANT + "-" + sequence.incrementAndGet();
                SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(TENANT).setClientRequestId(requestId)
                        .setSpec(shape(random)).build();
                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                boolean first = true;
                while (System.nanoTime() < giveUp) {
                    try {
                        SubmitJobResponse response = jobService().withDeadlineAfter(10, TimeUnit.SECONDS).submitJob(request);
                        accepted.put(requestId, response.getJob().getJobId());
                        requests.put(requestId, request);
                        mine.add(response.getJob().getJobId());
                        if (response.getDuplicate()) {
                            duplicates.incrementAndGet();
                            if (first) {
                                errors.add(requestId + " was new but the first SubmitJob said duplicate");
                            }
                        }
                        break;
                    } catch (StatusRuntimeException e) {
                        Status.Code code = e.getStatus().getCode();
                        if (code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED
                                && code != Status.Code.UNKNOWN && code != Status.Code.CANCELLED
                                && code != Status.Code.INTERNAL) {
                            errors.add(requestId + ": " + e.getStatus());
                            break;
                        }
                        first = false; // outcome unknown: the same request again, later
                        if (code == Status.Code.UNAVAILABLE) {
                            preferred = 1 - preferred; // a standby, or down: the other instance may lead
                        }
                        sleep(300);
                    }
                }
                if (!mine.isEmpty() && random.nextInt(10) == 0) {
                    String victim = mine.get(random.nextInt(mine.size()));
                    try {
                        jobService().withDeadlineAfter(10, TimeUnit.SECONDS).cancelJob(
                                CancelJobRequest.newBuilder().setJobId(victim).setReason("kill test").build());
                        cancelled.add(victim);
                    } catch (StatusRuntimeException e) {
                        // a crash in between: cancelling is best effort here
                    }
                }
                sleep(150 + random.nextInt(250));
            }
        }

        private static JobSpec shape(Random random) {
            int roll = random.nextInt(100);
            JobSpec.Builder spec = JobSpec.newBuilder().addCommand("sleep").addCommand(String.valueOf(2 + random.nextInt(4)))
                    .addGpuModels(LOAD_MODEL); // the H100 host is the probes'

            if (roll < 50) {
                return spec.setName("one-gpu").setWorkers(1).setGpusPerWorker(1).build();
            }
            if (roll < 62) { // one slice of an A100 40GB in MIG mode
                return spec.setName("mig").setWorkers(1).setMigProfile("1g.5gb").build();
            }
            if (roll < 85) {
                return spec.setName("eight-gpu").setWorkers(1).setGpusPerWorker(8).build();
            }
            return spec.setName("gang").setWorkers(2).setGpusPerWorker(4).setInterconnect(Interconnect.INTERCONNECT_RDMA)
                    .build();
        }
    }

    /** Waits until every accepted job has ended and the outbox is empty; false if that did not happen in time. */
    static boolean settle(Load load, String longJob, Duration atMost) throws Exception {
        long started = System.nanoTime();
        long deadline = started + atMost.toNanos();
        Set<String> ids = new HashSet<>(load.accepted.values());
        ids.addAll(probes);
        ids.add(longJob);
        while (System.nanoTime() < deadline) {
            Map<String, Row> jobs = jobs();
            long open = ids.stream().filter(id -> jobs.get(id) == null || !FINAL.contains(jobs.get(id).state)).count();
            long outbox = count("select count(*) from outbox");
            if (open == 0 && outbox == 0) {
                log("settled after " + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)
                        + " s: every accepted job ended, outbox empty");
                return true;
            }
            sleep(2000);
        }
        log("did not settle in " + atMost.toSeconds() + " s");
        return false;
    }

    // ---------------------------------------------------------------- the invariants

    /** A job long enough to be running at every restart of the test: it must run once, undisturbed, and succeed. */
    static String submitLongJob() {
        JobSpec spec = JobSpec.newBuilder().setName("long-runner").setWorkers(1).setGpusPerWorker(1).addGpuModels(LOAD_MODEL)
                .addCommand("sleep")
                .addCommand(String.valueOf(LONG_JOB_SECONDS)).build();
        String jobId = jobService().withDeadlineAfter(20, TimeUnit.SECONDS)
                .submitJob(SubmitJobRequest.newBuilder().setTenant(TENANT).setClientRequestId(TENANT + "-long")
                        .setSpec(spec).build())
                .getJob().getJobId();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Job job = jobService().withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getJob(GetJobRequest.newBuilder().setJobId(jobId).build());
            if (job.getState() == dev.gpucloud.contracts.grpc.v1.JobState.RUNNING) {
                log("long job " + jobId + " is RUNNING; the faults begin");
                return jobId;
            }
            sleep(250);
        }
        throw new IllegalStateException("long job " + jobId + " did not start in 30 s");
    }

    /**
     * Over the whole history, not just the end: no accepted job needed a second attempt or FAILED (the
     * fleet is healthy and no job preempts another, so only a fault of the scheduler could cause
     * either), and the agent never refused a START.
     */
    static void checkNothingRunningDisturbed(Load load, String longJob, Map<String, Row> jobs, List<String> violations)
            throws SQLException {
        Set<String> ours = new HashSet<>(load.accepted.values());
        ours.add(longJob);
        ours.addAll(probes);
        for (String id : ours) {
            Row row = jobs.get(id);
            if (row == null) {
                continue; // checkNoneLost says so
            }
            if (row.attempt > 1) {
                violations.add("rerun: job " + id + " is on attempt " + row.attempt + " (" + row.state + ": " + row.reason
                        + ")");
            }
            if ("FAILED".equals(row.state)) {
                violations.add("failed: job " + id + " FAILED: " + row.reason);
            }
        }
        Row probe = jobs.get(longJob);
        if (probe != null && !("SUCCEEDED".equals(probe.state) && probe.attempt == 1)) {
            violations.add("the long job " + longJob + " that ran across every restart ended " + probe.state
                    + " on attempt " + probe.attempt + " (" + probe.reason + ")");
        }
        long refused = count("select count(*) from allocations where exit_code = 125");
        if (refused > 0) {
            violations.add(refused + " START(s) refused by the agent (exit 125)");
        }
        List<String> busy = refusedForBusyGpus(RUN_DIR.resolve("logs/agent.log"));
        if (!busy.isEmpty()) {
            violations.add(busy.size() + " START(s) refused by the agent for a busy GPU (LOST), the first: " + busy.get(0));
        }
    }

    /**
     * The agent's log lines that refuse a START because other allocations hold its GPUs: the agent reports
     * those as LOST (the placement's doing), so only its log tells them from any other loss.
     */
    static List<String> refusedForBusyGpus(Path agentLog) {
        try (var lines = Files.lines(agentLog)) {
            return lines.filter(l -> l.contains("cannot start:") && l.contains("busy with")).toList();
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return List.of("cannot read " + agentLog + ": " + e.getMessage());
        }
    }

    /** Per whole GPU, no two allocations (ended ones included) were ever held over overlapping intervals. */
    /** One allocation's hold on a GPU or a slice: from its creation to its end (Long.MAX_VALUE: not ended). */
    record Held(String id, long from, long to) {
    }

    /** Every pair of holds on one thing (a GPU, a slice) whose intervals overlap is a violation. */
    static void overlaps(Map<String, List<Held>> byThing, String what, List<String> violations) {
        byThing.forEach((thing, held) -> {
            held.sort(java.util.Comparator.comparingLong(Held::from));
            for (int i = 1; i < held.size(); i++) {
                Held before = held.get(i - 1);
                Held after = held.get(i);
                if (after.from() < before.to()) {
                    violations.add(what + ": " + thing + " held by " + before.id() + " until "
                            + (before.to() == Long.MAX_VALUE ? "now" : java.time.Instant.ofEpochMilli(before.to()))
                            + " and by " + after.id() + " from " + java.time.Instant.ofEpochMilli(after.from()));
                }
            }
        });
    }

    static void checkNoGpuHeldTwiceOverHistory(List<String> violations) throws SQLException {
        Map<String, List<Held>> byGpu = new TreeMap<>();
        try (Connection c = db(SCHEMA); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "select id, node_id, gpu_indices, created_at, ended_at from allocations"
                        + " where mig_profile is null and milli_gpu >= 1000")) {
            while (rs.next()) {
                long from = rs.getTimestamp("created_at").getTime();
                java.sql.Timestamp ended = rs.getTimestamp("ended_at");
                long to = ended == null ? Long.MAX_VALUE : ended.getTime();
                for (String gpu : rs.getString("gpu_indices").split(",")) {
                    byGpu.computeIfAbsent(rs.getString("node_id") + " GPU " + gpu, k -> new ArrayList<>())
                            .add(new Held(rs.getString("id"), from, to));
                }
            }
        }
        overlaps(byGpu, "double-booked over time", violations);
    }

    /**
     * Per MIG slice of each GPU, no two allocations (ended ones included) were ever held over overlapping
     * intervals: a profile {@code <n>g.*} placed at start s holds slices s..s+n-1.
     */
    static void checkNoMigSliceHeldTwiceOverHistory(List<String> violations) throws SQLException {
        Map<String, List<Held>> bySlice = new TreeMap<>();
        try (Connection c = db(SCHEMA); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "select id, node_id, gpu_indices, mig_profile, mig_start, created_at, ended_at from allocations"
                        + " where mig_profile is not null")) {
            while (rs.next()) {
                long from = rs.getTimestamp("created_at").getTime();
                java.sql.Timestamp ended = rs.getTimestamp("ended_at");
                long to = ended == null ? Long.MAX_VALUE : ended.getTime();
                String profile = rs.getString("mig_profile");
                int width = Character.isDigit(profile.charAt(0)) ? profile.charAt(0) - '0' : 1;
                for (int slice = rs.getInt("mig_start"); slice < rs.getInt("mig_start") + width; slice++) {
                    bySlice.computeIfAbsent(rs.getString("node_id") + " GPU " + rs.getString("gpu_indices") + " slice "
                            + slice, k -> new ArrayList<>()).add(new Held(rs.getString("id"), from, to));
                }
            }
        }
        if (bySlice.isEmpty()) {
            violations.add("no MIG allocation was made: the MIG part of the load did not run");
        }
        overlaps(bySlice, "MIG slice held twice over time", violations);
    }

    static void checkNoneLost(Load load, Map<String, Row> jobs, List<String> violations) {
        var stub = jobService();
        load.accepted.forEach((requestId, jobId) -> {
            Row row = jobs.get(jobId);
            if (row == null) {
                violations.add("lost: " + requestId + " was accepted as " + jobId + ", which is not in the jobs table");
            } else if (!row.clientRequestId.equals(requestId)) {
                violations.add("job " + jobId + " has request id " + row.clientRequestId + ", accepted for " + requestId);
            }
            try {
                Job job = stub.withDeadlineAfter(10, TimeUnit.SECONDS).getJob(GetJobRequest.newBuilder().setJobId(jobId).build());
                if (!job.getClientRequestId().equals(requestId)) {
                    violations.add("GetJob " + jobId + " names request " + job.getClientRequestId() + ", not " + requestId);
                }
            } catch (StatusRuntimeException e) {
                violations.add("lost: GetJob " + jobId + " (accepted for " + requestId + "): " + e.getStatus());
            }
        });
        // A repeat of a sample of accepted requests must return the same job, as a duplicate.
        List<String> sample = new ArrayList<>(load.accepted.keySet());
        java.util.Collections.shuffle(sample, new Random(SEED));
        for (String requestId : sample.subList(0, Math.min(50, sample.size()))) {
            SubmitJobResponse again = stub.withDeadlineAfter(10, TimeUnit.SECONDS).submitJob(load.requests.get(requestId));
            if (!again.getDuplicate() || !again.getJob().getJobId().equals(load.accepted.get(requestId))) {
                violations.add("repeat of " + requestId + " returned " + again.getJob().getJobId() + " duplicate="
                        + again.getDuplicate() + ", first answer was " + load.accepted.get(requestId));
            }
        }
    }

    static void checkNonePlacedTwice(List<Alloc> active, List<String> violations) {
        Map<String, Set<Integer>> attemptsByJob = new TreeMap<>();
        Map<String, List<String>> byRank = new TreeMap<>();
        Map<String, List<String>> byGpu = new TreeMap<>();
        for (Alloc a : active) {
            attemptsByJob.computeIfAbsent(a.jobId, k -> new HashSet<>()).add(a.attempt);
            byRank.computeIfAbsent(a.jobId + " attempt " + a.attempt + " rank " + a.rank, k -> new ArrayList<>()).add(a.id);
            if (a.wholeGpus) {
                for (String gpu : a.gpus) {
                    byGpu.computeIfAbsent(a.nodeId + " GPU " + gpu, k -> new ArrayList<>()).add(a.id);
                }
            }
        }
        attemptsByJob.forEach((job, attempts) -> {
            if (attempts.size() > 1) {
                violations.add("placed twice: " + job + " has active allocations of attempts " + attempts);
            }
        });
        byRank.forEach((key, ids) -> {
            if (ids.size() > 1) {
                violations.add("placed twice: " + key + " has active allocations " + ids);
            }
        });
        byGpu.forEach((gpu, ids) -> {
            if (ids.size() > 1) {
                violations.add("double-booked: " + gpu + " is held by active allocations " + ids);
            }
        });
    }

    static void checkNoneLeaked(Map<String, Row> jobs, List<Alloc> active, List<String> violations) {
        for (Alloc a : active) {
            Row job = jobs.get(a.jobId);
            if (job == null) {
                violations.add("leaked: active allocation " + a.id + " of unknown job " + a.jobId);
            } else if (!LIVE.contains(job.state)) {
                violations.add("leaked: active allocation " + a.id + " (" + a.state + ") of " + job.state + " job " + a.jobId);
            } else if (a.attempt != job.attempt) {
                violations.add("leaked: active allocation " + a.id + " of attempt " + a.attempt + ", job " + a.jobId
                        + " is on attempt " + job.attempt);
            }
        }
    }

    /** After a restart the scheduler rebuilds its view of the GPUs: it must agree with the allocations table. */
    static void checkSchedulerViewMatchesTable(List<Alloc> active, List<String> violations) {
        Map<String, String> inTable = new TreeMap<>();
        for (Alloc a : active) {
            if (a.wholeGpus) {
                a.gpus.forEach(g -> inTable.put(a.nodeId + " GPU " + g, a.id));
            }
        }
        Map<String, String> inMemory = new TreeMap<>();
        var stub = ClusterServiceGrpc.newBlockingStub(channels[preferred]);
        for (Node node : NodePages.all(ListNodesRequest.getDefaultInstance(),
                page -> stub.withDeadlineAfter(20, TimeUnit.SECONDS).listNodes(page))) {
            if (!node.getNodeId().startsWith(NODE_PREFIX + "-")) {
                continue;
            }
            for (Gpu gpu : node.getGpusList()) {
                if (gpu.getAllocated()) {
                    inMemory.put(node.getNodeId() + " GPU " + gpu.getIndex(), gpu.getAllocationId());
                }
            }
        }
        Map<String, String> onlyInMemory = new TreeMap<>(inMemory);
        inTable.forEach(onlyInMemory::remove);
        Map<String, String> onlyInTable = new TreeMap<>(inTable);
        inMemory.forEach(onlyInTable::remove);
        Map<String, String> different = new TreeMap<>();
        inMemory.forEach((gpu, id) -> {
            if (inTable.containsKey(gpu) && !inTable.get(gpu).equals(id)) {
                different.put(gpu, id + " in memory, " + inTable.get(gpu) + " in the table");
            }
        });
        if (!onlyInMemory.isEmpty() || !onlyInTable.isEmpty() || !different.isEmpty()) {
            violations.add("the scheduler's view of allocated GPUs differs from the active rows: held only in memory "
                    + first(onlyInMemory) + ", only in the table " + first(onlyInTable) + ", by another allocation "
                    + first(different));
        }
    }

    /** What the agent runs must be active in the table, or a GPU is in use that the scheduler thinks free. */
    static void checkAgentRunsOnlyActive(List<Alloc> active, List<String> violations) throws Exception {
        Set<String> activeIds = new HashSet<>();
        active.forEach(a -> activeIds.add(a.id));
        JsonNode hosts = EventCodec.mapper().readTree(get(AGENT, "/agent/hosts"));
        for (JsonNode host : hosts) {
            for (JsonNode running : host.path("allocations")) {
                String id = running.path("allocationId").asText();
                if (!activeIds.contains(id)) {
                    violations.add("zombie: the agent runs " + id + " of " + running.path("jobId").asText() + " on "
                            + host.path("nodeId").asText() + " GPUs " + running.path("gpuIndices")
                            + ", which is not active in the allocations table");
                }
            }
        }
    }

    static String first(Map<String, String> map) {
        return map.entrySet().stream().limit(10).map(e -> e.getKey() + "=" + e.getValue())
                .collect(java.util.stream.Collectors.joining(", ", "{", map.size() > 10 ? ", ... (" + map.size() + ")}" : "}"));
    }

    /**
     * Once billing has folded everything the agent reported, it bills each allocation the scheduler made
     * once, for as long as it ran, and no job for a second attempt (KillTestBilling).
     */
    static void checkBilling(Load load, String longJob, List<String> violations) throws Exception {
        try (Connection c = billingDb(SCHEMA)) {
            if (!KillTestBilling.caughtUp("localhost:" + KAFKA, c, Duration.ofSeconds(60))) {
                violations.add("billing did not store usage.events up to its end within 60 s after the load settled");
                return;
            }
        }
        Map<String, Long> runMicros = new HashMap<>();
        load.accepted.forEach((requestId, jobId) -> runMicros.put(jobId,
                Long.parseLong(load.requests.get(requestId).getSpec().getCommand(1)) * 1_000_000));
        probes.forEach(id -> runMicros.put(id, PROBE_SECONDS * 1_000_000L));
        runMicros.put(longJob, LONG_JOB_SECONDS * 1_000_000L);
        Map<String, KillTestBilling.Made> made;
        try (Connection c = db(SCHEMA)) {
            made = KillTestBilling.made(c);
        }
        Map<String, KillTestBilling.Billed> billed;
        try (Connection c = billingDb(SCHEMA)) {
            billed = KillTestBilling.billed(c);
        }
        Map<String, Long> invoiced = KillTestBilling.invoicedSeconds(BILLING,
                billed.values().stream().map(KillTestBilling.Billed::tenant).collect(java.util.stream.Collectors.toSet()));
        KillTestBilling.checkBilledAsMade(made, billed, runMicros, violations);
        KillTestBilling.checkInvoiced(billed, invoiced, violations);
        log("billing: " + billed.size() + " allocation(s) of " + invoiced.size() + " job(s) billed, "
                + invoiced.values().stream().mapToLong(Long::longValue).sum() + " SKU-seconds invoiced; the scheduler made "
                + made.size() + " allocation(s), " + made.values().stream().filter(m -> m.startedAt() != 0).count()
                + " started");
    }

    // ---------------------------------------------------------------- database

    record Row(String id, String clientRequestId, String state, int attempt, String reason) {
    }

    record Alloc(String id, String jobId, int attempt, int rank, String nodeId, List<String> gpus, String state,
            boolean wholeGpus) {
    }

    static Connection db(String schema) throws SQLException {
        return DriverManager.getConnection(schema == null ? JDBC : JDBC + "?currentSchema=" + schema, DB_USER, DB_PASSWORD);
    }

    static Connection billingDb(String schema) throws SQLException {
        String url = "jdbc:postgresql://" + PG + "/" + KillTestBilling.DB;
        return DriverManager.getConnection(schema == null ? url : url + "?currentSchema=" + schema, DB_USER, DB_PASSWORD);
    }

    static Map<String, Row> jobs() throws SQLException {
        Map<String, Row> rows = new HashMap<>();
        try (Connection c = db(SCHEMA); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("select id, client_request_id, state, attempt, reason from jobs")) {
            while (rs.next()) {
                rows.put(rs.getString(1), new Row(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
                        rs.getString(5)));
            }
        }
        return rows;
    }

    static List<Alloc> activeAllocations() throws SQLException {
        List<Alloc> rows = new ArrayList<>();
        try (Connection c = db(SCHEMA); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("select * from allocations where state in ('STARTING', 'RUNNING')")) {
            Set<String> columns = new HashSet<>();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                columns.add(rs.getMetaData().getColumnName(i));
            }
            while (rs.next()) {
                String gpus = rs.getString("gpu_indices");
                // Whole GPUs unless the row is a MIG slice or a share of a GPU (columns of a later migration).
                boolean whole = (!columns.contains("mig_profile") || rs.getString("mig_profile") == null)
                        && (!columns.contains("milli_gpu") || rs.getInt("milli_gpu") >= 1000);
                rows.add(new Alloc(rs.getString("id"), rs.getString("job_id"), rs.getInt("attempt"), rs.getInt("rank"),
                        rs.getString("node_id"), gpus == null || gpus.isBlank() ? List.of() : List.of(gpus.split(",")),
                        rs.getString("state"), whole));
            }
        }
        return rows;
    }

    static long count(String sql) throws SQLException {
        try (Connection c = db(SCHEMA); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ---------------------------------------------------------------- processes

    /**
     * Refuses to start while anything listens on the test's ports: kafka.sh would adopt another run's broker,
     * and this run's agent would announce its hosts there before failing on its own port, so the other run's
     * schedulers would place jobs on hosts that never start them.
     */
    static void requireFreePorts() {
        for (int port : new int[] {SCHEDULERS[0], SCHEDULERS[1], KAFKA, KAFKA_CONTROLLER, AGENT, BILLING}) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("localhost", port), 1000);
            } catch (IOException e) {
                continue; // nothing listens: free
            }
            throw new IllegalStateException("port " + port + " is in use (another run of this test?): `ss -ltnp | grep "
                    + port + "` says by what");
        }
    }

    static void startScheduler(int instance) throws Exception {
        schedulerStarts++;
        int port = SCHEDULERS[instance];
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_HTTP_PORT", String.valueOf(port));
        env.put("GPUCLOUD_SCHEDULER_INSTANCE", "scheduler-" + instance);
        env.put("GPUCLOUD_SCHEDULER_ADVERTISED_ADDRESS", "localhost:" + port);
        env.put("KAFKA_BOOTSTRAP_SERVERS", "localhost:" + KAFKA);
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + PG + "/" + DB + "?search_path=" + SCHEMA);
        env.put("QUARKUS_DATASOURCE_JDBC_URL", JDBC + "?currentSchema=" + SCHEMA);
        env.put("QUARKUS_FLYWAY_SCHEMAS", SCHEMA);
        env.put("QUARKUS_FLYWAY_DEFAULT_SCHEMA", SCHEMA);
        // short enough that silence measured from the (stale) inventory record would lose every allocation
        env.put("GPUCLOUD_SCHEDULER_HOST_LOST_TIMEOUT", "20s");
        env.put("GPUCLOUD_SCHEDULER_HOST_TIMEOUT", "15s");
        schedulers[instance] = java("scheduler-" + instance + "-start-" + schedulerStarts, port, env, List.of(),
                SCHEDULER_APP.resolve("quarkus-run.jar"));
        waitReady("scheduler-" + instance, port, schedulers[instance]);
    }

    /**
     * Starts billing-service on the test's broker, its tables in a schema of their own in the billing test
     * database, with the minimum the checks expect.
     */
    static void startBilling() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("KAFKA_BOOTSTRAP_SERVERS", "localhost:" + KAFKA);
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + PG + "/" + KillTestBilling.DB + "?search_path=" + SCHEMA);
        env.put("QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + PG + "/" + KillTestBilling.DB + "?currentSchema=" + SCHEMA);
        env.put("QUARKUS_FLYWAY_SCHEMAS", SCHEMA);
        env.put("QUARKUS_FLYWAY_DEFAULT_SCHEMA", SCHEMA);
        billing = java("billing-start-" + ++billingStarts, BILLING, env, List.of(
                "-Dgpucloud.billing.minimum-billable-seconds=" + KillTestBilling.MINIMUM_SECONDS,
                // static membership: a restart after kill -9 takes the partitions back at once instead of
                // waiting out the killed consumer's session
                "-Dmp.messaging.incoming.usage-in.group.instance.id=billing-killtest-" + RUN_ID),
                BILLING_APP.resolve("quarkus-run.jar"));
    }

    /**
     * Restarts the machine's PostgreSQL cluster {@code -Dgpucloud.killtest.pg-cluster} (fast shutdown: every
     * connection is cut), as an operator or a failover of the database would. Where the database is not that
     * cluster (another port, or no such cluster here), says so and leaves it alone.
     */
    static void restartDatabase() throws Exception {
        String cluster = System.getProperty("gpucloud.killtest.pg-cluster", "15 main");
        String port = clusterPort(cluster);
        if (!Files.isExecutable(Path.of("/usr/bin/pg_ctlcluster")) || port == null || !PG.endsWith(":" + port)) {
            log("PostgreSQL at " + PG + " is not this machine's cluster " + cluster + ": its restart is skipped");
            return;
        }
        List<String> command = new ArrayList<>(List.of("pg_ctlcluster"));
        command.addAll(List.of(cluster.split(" ")));
        command.add("restart");
        Process p = new ProcessBuilder(command).directory(new File("/")).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(RUN_DIR.resolve("logs/postgres-restart.log").toFile()))
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("pg_ctlcluster " + cluster + " restart failed; see "
                    + RUN_DIR.resolve("logs/postgres-restart.log"));
        }
        log("PostgreSQL " + cluster + " restarted");
    }

    /** The port of a cluster of this machine ("15 main"), as pg_lsclusters lists it; null if it lists none. */
    static String clusterPort(String cluster) throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/pg_lsclusters"))) {
            return null;
        }
        Process p = new ProcessBuilder("pg_lsclusters", "--no-header").redirectErrorStream(true).start();
        String listing = new String(p.getInputStream().readAllBytes());
        p.waitFor(10, TimeUnit.SECONDS);
        for (String line : listing.split("\n")) {
            String[] fields = line.trim().split("\\s+"); // version, name, port, status, ...
            if (fields.length >= 3 && (fields[0] + " " + fields[1]).equals(cluster)) {
                return fields[2];
            }
        }
        return null;
    }

    /** Ends an instance: SIGTERM (a graceful stop, as an upgrade does) or SIGKILL. */
    static void end(int instance, boolean graceful) throws InterruptedException {
        Process p = schedulers[instance];
        if (graceful) {
            p.destroy();
        } else {
            p.destroyForcibly();
        }
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        log("scheduler-" + instance + " exited with status " + p.exitValue());
    }

    static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
        }
    }

    static void resume(Process p) {
        if (p != null && p.isAlive()) {
            try {
                signal(p, "CONT");
            } catch (Exception e) {
                // gone meanwhile
            }
        }
    }

    /** A JobService client on the preferred instance (the leader as last found). */
    static JobServiceGrpc.JobServiceBlockingStub jobService() {
        return JobServiceGrpc.newBlockingStub(channels[preferred]);
    }

    /** What an instance says of itself on /scheduler/leader: "leader", "standby", or "down". */
    static String role(int instance) {
        try {
            return EventCodec.mapper().readTree(get(SCHEDULERS[instance], "/scheduler/leader")).path("role").asText("?");
        } catch (Exception e) {
            return "down";
        }
    }

    static boolean becomes(int instance, String role, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (role.equals(role(instance))) {
                return true;
            }
            sleep(200);
        }
        return false;
    }

    /** The instance that leads now; fails if none does within {@code within}. */
    static int leaderIndex(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 2; i++) {
                if ("leader".equals(role(i))) {
                    return i;
                }
            }
            sleep(200);
        }
        throw new IllegalStateException("no scheduler instance leads after " + within.toSeconds() + " s");
    }

    /**
     * Measures how long after a fault the scheduler places again: a probe job is submitted as the fault
     * strikes (retried on the other instance after a one-second deadline, as a client of a paused leader
     * would), on a host of its own, and the figure is the time from the fault to its allocation's creation
     * (the schedulers' clock, this machine's), not to when the probe's polling noticed it.
     */
    static final class Probe extends Thread {
        final Fault fault;
        final long from = System.nanoTime();
        final long fromWall = System.currentTimeMillis();
        volatile long placedAfterMillis = -1;
        volatile long seenAfterMillis = -1;
        final int number;
        volatile String jobId;
        /** The last answer that was not the job placed: an error, or the job's state and reason. */
        volatile String lastAnswer = "none";
        volatile int lastInstance = -1;

        /** The probe of the {@code number}th fault: its request id is its own, whatever the kind repeats. */
        Probe(Fault fault, int number) {
            super("probe-" + number + "-" + fault);
            this.number = number;
            this.fault = fault;
            setDaemon(true);
        }

        @Override
        public void run() {
            // its own tenant and its own host: the load's queue is neither in front of it nor in its way
            SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(TENANT + "-probe")
                    .setClientRequestId(TENANT + "-probe-" + number + "-" + fault).setSpec(JobSpec.newBuilder().setName("probe")
                            .setWorkers(1).setGpusPerWorker(1).addGpuModels(PROBE_MODEL)
                            .addCommand("sleep").addCommand(String.valueOf(PROBE_SECONDS)))
                    .build();
            long deadline = from + TimeUnit.SECONDS.toNanos(90);
            int at = preferred;
            while (System.nanoTime() < deadline) {
                try {
                    var stub = JobServiceGrpc.newBlockingStub(channels[at]).withDeadlineAfter(1, TimeUnit.SECONDS);
                    if (jobId == null) {
                        jobId = stub.submitJob(request).getJob().getJobId();
                        probes.add(jobId);
                    }
                    Job job = stub.getJob(GetJobRequest.newBuilder().setJobId(jobId).build());
                    lastInstance = at;
                    lastAnswer = job.getState() + " (" + job.getReason() + ")";
                    if (job.getState() != dev.gpucloud.contracts.grpc.v1.JobState.PENDING) {
                        seenAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from);
                        placedAfterMillis = placedAt(jobId) - fromWall;
                        return;
                    }
                    SchedulerKillIT.sleep(50);
                } catch (StatusRuntimeException e) {
                    lastInstance = at;
                    lastAnswer = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
                    at = 1 - at; // down, paused, or a standby: try the other instance
                    SchedulerKillIT.sleep(50);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
        }

        /** What the probe last saw, and what the database says of its job and of the lease now: for a failure. */
        String diagnosis() {
            StringBuilder b = new StringBuilder("probe job " + jobId + "; last answer from scheduler-" + lastInstance
                    + ": " + lastAnswer);
            try {
                if (jobId != null) {
                    Row r = jobs().get(jobId);
                    b.append("; in the database: ").append(r == null ? "no row" : r.state() + " (" + r.reason() + ")");
                }
                try (Connection c = db(SCHEMA); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                        "select holder, epoch, lease_until > now() from scheduler_leader where id = 1")) {
                    if (rs.next()) {
                        b.append("; lease: ").append(rs.getString(1)).append(" epoch ").append(rs.getLong(2))
                                .append(rs.getBoolean(3) ? " (running)" : " (expired)");
                    }
                }
                for (int i = 0; i < 2; i++) {
                    b.append("; scheduler-").append(i).append(": ").append(role(i)).append(", health ");
                    try {
                        b.append(get(SCHEDULERS[i], "/q/health").replaceAll("\\s+", " "));
                    } catch (Exception e) {
                        b.append(e);
                    }
                }
            } catch (Exception e) {
                b.append("; could not read more: ").append(e);
            }
            return b.toString();
        }

        /** When the job's first allocation was created, in epoch milliseconds. */
        static long placedAt(String jobId) throws SQLException {
            try (Connection c = db(SCHEMA); var st = c.prepareStatement(
                    "select min(created_at) from allocations where job_id = ?")) {
                st.setString(1, jobId);
                try (ResultSet rs = st.executeQuery()) {
                    rs.next();
                    return rs.getTimestamp(1).getTime();
                }
            }
        }
    }

    /** The probe jobs' ids: they are accepted jobs like the load's, held to the same invariants. */
    static final Set<String> probes = ConcurrentHashMap.newKeySet();

    static DevIssuer startIssuer() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            DevIssuer issuer = DevIssuer.inMemory("http://127.0.0.1:" + server.getAddress().getPort());
            issuer.serveOn(server);
            return issuer;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the development issuer", e);
        }
    }

    static Process java(String name, int port, Map<String, String> env, List<String> props, Path jar) throws IOException {
        String heap = "agent".equals(name) && HOSTS > 200 ? "-Xmx768m" : "-Xmx384m"; // a big simulated fleet
        List<String> command = new ArrayList<>(List.of("java", heap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dquarkus.http.port=" + port));
        command.addAll(props);
        command.addAll(List.of("-jar", jar.toString()));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(RUN_DIR.resolve("logs/" + name + ".log").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(env);
        pb.environment().put("GPUCLOUD_OIDC_URL", ISSUER.issuer());
        return pb.start();
    }

    static void waitReady(String name, int port, Process process) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        long started = System.nanoTime();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited " + process.exitValue() + "; see " + RUN_DIR.resolve("logs"));
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                        + "/q/health/ready")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    log(name + " ready on :" + port + " after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
                            + " ms");
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            sleep(500);
        }
        throw new IllegalStateException(name + " was not ready in 150 s; see " + RUN_DIR.resolve("logs"));
    }

    static void waitForFleet() {
        var cluster = ClusterServiceGrpc.newBlockingStub(channels[preferred]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            long known = NodePages.all(ListNodesRequest.getDefaultInstance(),
                            page -> cluster.withDeadlineAfter(10, TimeUnit.SECONDS).listNodes(page))
                    .stream().filter(n -> n.getNodeId().startsWith(NODE_PREFIX + "-") && n.getHealthy()).count();
            if (known >= HOSTS + MIG_HOSTS + 1) { // the probes' H100 too
                return;
            }
            sleep(500);
        }
        throw new IllegalStateException("the scheduler did not see the " + (HOSTS + MIG_HOSTS + 1) + " simulated hosts in 90 s");
    }

    static void stop(Process process) throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    static void killChildren() {
        for (Process p : new Process[] {schedulers[0], schedulers[1], agent, billing}) {
            if (p != null && p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    static void kafka(String command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("deploy/local/kafka.sh").toString(), command)
                .directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(RUN_DIR.resolve("logs/kafka.sh.log").toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().put("GPUCLOUD_RUN_DIR", RUN_DIR.toString());
        pb.environment().put("KAFKA_PORT", String.valueOf(KAFKA));
        pb.environment().put("KAFKA_CONTROLLER_PORT", String.valueOf(KAFKA_CONTROLLER));
        Process p = pb.start();
        if (!p.waitFor(3, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("deploy/local/kafka.sh " + command + " failed: "
                    + Files.readString(RUN_DIR.resolve("logs/kafka.sh.log")));
        }
    }

    static String get(int port, String path) throws IOException, InterruptedException {
        // the operator's token: the agent's own endpoints answer operators only
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    static void copyTree(Path from, Path to) throws IOException {
        if (!Files.exists(from.resolve("quarkus-run.jar"))) {
            throw new IllegalStateException(from.resolve("quarkus-run.jar") + " is missing: package the service first"
                    + " (./mvnw -B -pl scheduler-service,node-agent,billing-service package -DskipTests)");
        }
        deleteTree(to);
        try (var paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void log(String message) {
        System.out.println("[kill-test " + java.time.LocalTime.now().withNano(0) + "] " + message);
    }
}
