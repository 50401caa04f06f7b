package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Python client (clients/python) against a stack of its own, as a user installs it: a venv that sees Debian's
 * python3-grpcio and python3-protobuf, {@code pip install --no-build-isolation --no-deps ./clients/python} (its
 * stubs generated from contracts by protoc while building), then its pytest suite with the stack's address, CA
 * and a {@code ./gpucloud login} in the environment. Any pytest failure, or an integration test skipped for any
 * reason but a scheduler without StreamLogs, fails this test with pytest's output. {@code ./gpucloud up --fresh}
 * gives the stack its own ports, broker and databases; {@code down} must leave none of its processes.
 */
class PythonClientIT {

    static final Path ROOT = Path.of(System.getProperty("gpucloud.root", "..")).toAbsolutePath().normalize();
    static final Path BASE = ROOT.resolve("e2e-tests/target/python-client");
    /** Debian's interpreter, where apt puts python3-grpcio (a python3 of pyenv or conda on the PATH has none). */
    static final String PYTHON = System.getProperty("gpucloud.python",
            Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3");
    /** What pytest may skip against a stack: the logs test, while the scheduler answers UNIMPLEMENTED. */
    static final String ALLOWED_SKIP = "the scheduler answers UNIMPLEMENTED for StreamLogs";

    @BeforeAll
    static void nothingFromBefore() throws IOException {
        if (Files.exists(BASE)) {
            try (Stream<Path> all = Files.walk(BASE)) {
                all.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
        Files.createDirectories(BASE);
    }

    @AfterEach
    void downIfStillUp() throws Exception {
        if (Files.exists(BASE.resolve("active"))) {
            try {
                run(BASE.resolve("down.log"), Map.of(), "bash", ROOT.resolve("gpucloud").toString(), "down");
            } catch (AssertionError | IllegalStateException e) {
                System.err.println("cleanup: " + e.getMessage());
            }
        }
    }

    @Test
    void the_python_client_installed_from_debian_packages_passes_its_tests_against_a_fresh_stack() throws Exception {
        Path venv = BASE.resolve("venv");
        run(BASE.resolve("venv.log"), Map.of(), PYTHON, "-m", "venv", "--system-site-packages", venv.toString());
        // nothing from a package index: the build takes Debian's setuptools, the client Debian's grpcio and protobuf
        run(BASE.resolve("pip.log"), Map.of("PIP_NO_INDEX", "1", "PIP_DISABLE_PIP_VERSION_CHECK", "1"),
                venv.resolve("bin/pip").toString(), "install", "--no-build-isolation", "--no-deps", "--no-cache-dir",
                ROOT.resolve("clients/python").toString());

        gpucloud("up", "--fresh");
        gpucloud("login", "--dev", "--user", "pia", "--tenant", "acme", "--role", "member");
        Path stack = Path.of(Files.readString(BASE.resolve("active")).strip());
        Map<String, Integer> ports = new java.util.LinkedHashMap<>();
        for (String line : Files.readAllLines(stack.resolve("stack.env"))) {
            if (line.matches("[A-Z_]+_PORT=\\d+")) {
                ports.put(line.substring(0, line.indexOf('=')), Integer.parseInt(line.substring(line.indexOf('=') + 1)));
            }
        }
        assertThat(ports).as("the ports in %s/stack.env", stack).containsKey("GPUCLOUD_SCHEDULER_PORT");
        String port = String.valueOf(ports.get("GPUCLOUD_SCHEDULER_PORT"));
        Path ca = stack.resolve("tls/ca.pem");
        List<Long> pids = pids(stack);

        Map<String, String> env = new java.util.HashMap<>(Map.of("GPUCLOUD_SCHEDULER", "localhost:" + port,
                "GPUCLOUD_HOME", BASE.resolve("home").toString(), "GPUCLOUD_STACK_REQUIRED", "1"));
        if (Files.exists(ca)) {
            env.put("GPUCLOUD_CA_FILE", ca.toString());
        }
        Path pytestLog = BASE.resolve("pytest.log");
        int code = start(pytestLog, env, ROOT.resolve("clients/python"), venv.resolve("bin/python").toString(), "-m",
                "pytest", "-p", "no:cacheprovider", "-rs", "-v", "tests");
        String output = Files.readString(pytestLog);
        System.out.println(output);
        assertThat(code).as("pytest exited %d; its output:\n%s", code, output).isZero();
        List<String> skipped = output.lines().filter(l -> l.startsWith("SKIPPED")).toList();
        assertThat(skipped).as("pytest skipped what only a scheduler without StreamLogs may skip:\n%s", output)
                .allMatch(l -> l.contains(ALLOWED_SKIP));
        assertThat(output).as("the integration tests ran").contains("test_stack.py::test_a_job_watched_to_its_end PASSED");

        gpucloud("down");
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid %d after down", pid)
                    .isFalse();
        }
        ports.forEach((name, p) -> assertThat(listening(p)).as("%s %d after down", name, p).isFalse());
        assertThat(BASE.resolve("active")).doesNotExist();
    }

    static boolean listening(int port) {
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress("localhost", port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The pids gpucloud keeps for the running stack (services, issuer, broker, database). */
    static List<Long> pids(Path stack) throws IOException {
        List<Long> pids = new ArrayList<>();
        try (Stream<Path> all = Files.walk(stack)) {
            for (Path file : all.filter(p -> p.getFileName().toString().endsWith(".pid")
                    && !p.toString().contains("/data/")).toList()) {
                pids.add(Long.parseLong(Files.readString(file).strip()));
            }
        }
        assertThat(pids).as("the stack's pid files").isNotEmpty();
        return pids;
    }

    /** ./gpucloud with an environment that names no broker, database or port but the test's own run folder. */
    static void gpucloud(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", ROOT.resolve("gpucloud").toString()));
        command.addAll(List.of(args));
        run(BASE.resolve("gpucloud-" + args[0] + ".log"), Map.of(), command.toArray(String[]::new));
    }

    static void run(Path log, Map<String, String> extra, String... command) throws Exception {
        int code = start(log, extra, ROOT, command);
        assertThat(code).as("%s exited %d; its output:\n%s", String.join(" ", command), code, Files.readString(log))
                .isZero();
    }

    static int start(Path log, Map<String, String> extra, Path dir, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(name -> name.startsWith("GPUCLOUD_") || name.startsWith("KAFKA_")
                || name.startsWith("PG") || name.startsWith("QUARKUS_"));
        env.put("GPUCLOUD_RUN_DIR", BASE.toString());
        env.put("GPUCLOUD_HOME", BASE.resolve("home").toString());
        env.putAll(extra);
        Process process = pb.start();
        if (!process.waitFor(8, TimeUnit.MINUTES)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish in 8 minutes:\n"
                    + Files.readString(log));
        }
        return process.exitValue();
    }
}
