package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's first command as a new user meets it: {@code ./gpucloud demo} on a broker and
 * databases that hold nothing yet. {@code --fresh} gives the run its own broker data, its own
 * embedded PostgreSQL and database names, and free ports, so nothing a developer or an earlier
 * test left running is adopted; and none of this environment's broker or database settings reach
 * it. Then {@code ./gpucloud down} must leave no process and no listening port behind.
 */
class FirstRunIT {

    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path BASE = ROOT.resolve("e2e-tests/target/first-run");
    static final List<String> PORT_VARS = List.of("GPUCLOUD_SCHEDULER_PORT", "GPUCLOUD_BILLING_PORT",
            "GPUCLOUD_METRICS_PORT", "GPUCLOUD_AGENT_PORT", "KAFKA_PORT", "KAFKA_CONTROLLER_PORT", "PGPORT",
            "GPUCLOUD_ISSUER_PORT");

    @BeforeAll
    static void nothingFromBefore() throws IOException {
        if (Files.exists(BASE)) {
            try (Stream<Path> all = Files.walk(BASE)) {
                all.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
        Files.createDirectories(BASE);
    }

    /** A failed run must not leave its stack behind for the next test or the developer. */
    @AfterEach
    void downIfStillUp() throws Exception {
        if (Files.exists(BASE.resolve("active"))) {
            try {
                gpucloud("down");
            } catch (AssertionError | IllegalStateException e) {
                System.err.println("cleanup: " + e.getMessage());
            }
        }
    }

    @Test
    void demo_from_nothing_shows_the_gang_running_metrics_and_invoices_then_down_leaves_nothing() throws Exception {
        String demo = gpucloud("demo", "--fresh");

        Matcher gang = Pattern.compile("(job-\\w+)\\s+globex\\s+gpt-16x8\\s+RUNNING\\s+(sim-a100-\\d)\\[[^]]*] (sim-a100-\\d)\\[")
                .matcher(demo);
        assertThat(gang.find()).as("the 2-host RDMA gang runs on two A100 hosts:\n" + demo).isTrue();
        assertThat(gang.group(2)).isNotEqualTo(gang.group(3));
        assertThat(demo).contains("placement    rank 0: sim-a100-", "             rank 1: sim-a100-")
                .containsPattern("DCGM_FI_DEV_GPU_UTIL\\{[^}]*Hostname=\"sim-a100-[01]\"[^}]*} [0-9.]+")
                .containsPattern(gang.group(1) + "\\W+.*A100-SXM4-40GB")
                .containsPattern("job-\\w+\\W+.*H100-SXM5-80GB")
                .contains("the system keeps running");
        // what the gang's two workers said reached their tenant through job.logs and gpucloud logs
        assertThat(demo).contains("what its workers wrote")
                .containsPattern("simulated worker 0 of 2 on sim-a100-\\d")
                .containsPattern("simulated worker 1 of 2 on sim-a100-\\d");
        // /q/metrics answers Prometheus's scrape token only
        assertThat(demo).contains("and without the scrape token: 401");
        // an operator's cordon shows in the fleet's listing, and is lifted
        assertThat(demo).containsPattern("  sim-[\\w-]+ +cordoned +\\(demo: replace NIC\\)")
                .containsPattern("  sim-[\\w-]+ .* cordoned .*\\(demo: replace NIC\\)")
                .containsPattern("  sim-[\\w-]+ +takes work again");
        // tenant isolation, as the demo shows it: acme's member neither finds nor cancels globex's gang, and a
        // call without a token is refused; those are the only errors it may print
        assertThat(demo).contains("acme's listing holds 0 globex jobs")
                .containsPattern("  error: NOT_FOUND: job '" + gang.group(1) + "' not found\n  error: NOT_FOUND: job '"
                        + gang.group(1) + "' not found")
                .contains("  error: UNAUTHENTICATED: no bearer token")
                .contains("'alice' (member of acme) may not read the invoices of tenant 'globex'");
        // the audit record of the refused cancel, and a plaintext request to a service that speaks TLS only
        assertThat(demo).containsPattern("alice +acme +scheduler\\.CancelJob +" + gang.group(1) + " .* NOT_FOUND: job")
                .containsPattern("TLS 1.3 only, with a certificate from this stack's CA [^\n]*; in plaintext:\n"
                        + "  curl: \\(52\\) Empty reply from server")
                .containsPattern("scheduler +\\d+ +https://localhost:");
        // the broker, as the demo shows it: a usage record forged without a login, and writes outside a
        // principal's ACLs, are refused; those are the only refusals it may print
        String forged = "  (a usage record forged with no login|the agent's login sending a command to hosts"
                + "|billing's login writing usage): refused: [^\n]*";
        assertThat(demo).contains("the broker: every client logs in as its own principal")
                .containsPattern("a usage record forged with no login: refused: the broker closed the connection")
                .contains("the agent's login sending a command to hosts: refused: not authorized (ACL)")
                .contains("billing's login writing usage: refused: not authorized (ACL)")
                // the broker takes it, the readers do not: the agent is enrolled for sim-* only
                .contains("refused by a reader: node.events: agent 'sim-agent' is enrolled for sim-*, not for host 'other-0'");
        assertThat(demo.replaceAll("  error: (NOT_FOUND: job '[^']*' not found|UNAUTHENTICATED: no bearer token[^\n]*)", "")
                .replaceAll(forged, ""))
                .doesNotContain("refused:", "Permission denied", "Exception", "\tat ", "error:");

        Map<String, Integer> ports = stackPorts();
        List<Long> pids = pids();
        assertThat(pids).as("services, issuer, broker and database, each by pid").hasSize(7);

        gpucloud("down");
        assertNothingLeft(ports, pids);
    }

    @Test
    void up_then_down_leaves_no_process_no_port_and_no_pid_file() throws Exception {
        String up = gpucloud("up", "--fresh");
        assertThat(up).contains("isolated stack in").doesNotContain("adopting", "Permission denied", "Exception");
        Map<String, Integer> ports = stackPorts();
        List<Long> pids = pids();
        assertThat(pids).hasSize(7);
        for (int port : ports.values()) {
            if (port != ports.get("KAFKA_CONTROLLER_PORT")) {
                assertThat(listening(port)).as("port %d after up", port).isTrue();
            }
        }

        gpucloud("down");
        assertNothingLeft(ports, pids);
    }

    static void assertNothingLeft(Map<String, Integer> ports, List<Long> pids) throws IOException {
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid %d after down", pid)
                    .isFalse();
        }
        ports.forEach((name, port) -> assertThat(listening(port)).as("%s %d after down", name, port).isFalse());
        assertThat(pidFiles()).as("pid files after down").isEmpty();
        assertThat(BASE.resolve("active")).doesNotExist();
    }

    /** The run folder of the isolated stack that runs now, as up --fresh wrote it to BASE/active. */
    static Path activeRun() throws IOException {
        return Path.of(Files.readString(BASE.resolve("active")).strip());
    }

    /** The ports the isolated stack chose, from the stack.env that up wrote. */
    static Map<String, Integer> stackPorts() throws IOException {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (String line : Files.readAllLines(activeRun().resolve("stack.env"))) {
            String[] kv = line.split("=", 2);
            if (PORT_VARS.contains(kv[0])) {
                ports.put(kv[0], Integer.parseInt(kv[1]));
            }
        }
        assertThat(ports).containsOnlyKeys(PORT_VARS);
        return ports;
    }

    /** Every pid file under the run folders, PostgreSQL's own postmaster.pid included. */
    static List<Path> pidFiles() throws IOException {
        try (Stream<Path> all = Files.walk(BASE)) {
            return all.filter(p -> p.getFileName().toString().endsWith(".pid")).toList();
        }
    }

    /** The processes gpucloud started for the running stack: its pid files, not the servers' own. */
    static List<Long> pids() throws IOException {
        List<Long> pids = new ArrayList<>();
        Path run = activeRun();
        for (Path file : pidFiles()) {
            if (file.startsWith(run) && !file.toString().contains("/data/")) {
                pids.add(Long.parseLong(Files.readString(file).strip()));
            }
        }
        return pids;
    }

    static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("localhost", port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Runs ./gpucloud with an environment that names no broker, database or port; returns its output. */
    static String gpucloud(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("gpucloud").toString()));
        command.addAll(List.of(args));
        Path log = BASE.resolve("gpucloud-" + String.join("-", args) + ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(name -> name.startsWith("GPUCLOUD_") || name.startsWith("KAFKA_")
                || name.startsWith("PG") || name.startsWith("QUARKUS_"));
        env.put("GPUCLOUD_RUN_DIR", BASE.toString());
        // the demo's logins go to a home of the test's own: another stack's demo on this machine writes the
        // same profile names with its own issuer's tokens
        env.put("GPUCLOUD_HOME", BASE.resolve("home").toString());
        Process process = pb.start();
        if (!process.waitFor(8, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("./gpucloud " + String.join(" ", args) + " did not finish in 8 minutes:\n"
                    + Files.readString(log));
        }
        String output = Files.readString(log);
        assertThat(process.exitValue()).as("./gpucloud %s exited; its output:\n%s", String.join(" ", args), output)
                .isZero();
        return output;
    }
}
