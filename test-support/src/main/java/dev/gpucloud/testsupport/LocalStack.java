package dev.gpucloud.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Finds the repository and runs its deploy/local scripts, which start the real broker and database. */
public final class LocalStack {

    private LocalStack() {
    }

    /** The repository root: the nearest folder above the working directory that has deploy/local. */
    public static Path root() {
        String configured = System.getProperty("gpucloud.root");
        if (configured != null && Files.isDirectory(Path.of(configured, "deploy", "local"))) {
            return Path.of(configured);
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isRegularFile(dir.resolve("deploy/local/kafka.sh"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("cannot find the gpucloud repository above " + Path.of("").toAbsolutePath());
    }

    /** Runs deploy/local/SCRIPT ARGS, passing its output through; fails if it exits non-zero. */
    public static void run(String script, String... args) {
        Path root = root();
        List<String> command = new java.util.ArrayList<>(List.of("bash", root.resolve("deploy/local/" + script).toString()));
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).directory(root.toFile()).inheritIO()
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish in 5 minutes");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited with " + process.exitValue());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
    }

    /** True when something accepts TCP connections at host:port within a second. */
    public static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
