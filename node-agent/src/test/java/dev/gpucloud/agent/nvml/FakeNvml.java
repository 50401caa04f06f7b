package dev.gpucloud.agent.nvml;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds src/test/c/fake_nvml.c with gcc into target/fake-nvml (once per JVM) and installs a copy,
 * with a scenario, in a folder of the test's own, so each test dlopens a fresh library. Without
 * gcc the tests fail: the JNA binding would otherwise go untested.
 */
final class FakeNvml {

    static final Path SOURCE = Path.of("src/test/c/fake_nvml.c");
    static final Path BUILD = Path.of("target/fake-nvml");

    private static Path full;
    private static Path legacy;

    private FakeNvml() {
    }

    /** A folder holding libnvidia-ml.so.1 (every symbol) and scenario.txt with these lines. */
    static Path install(Path dir, String... scenario) throws IOException {
        return install(dir, false, scenario);
    }

    /** As {@link #install(Path, String...)}, built without nvmlDeviceGetTemperatureV and nvmlDeviceGetTotalEnergyConsumption. */
    static Path installLegacy(Path dir, String... scenario) throws IOException {
        return install(dir, true, scenario);
    }

    private static synchronized Path install(Path dir, boolean legacyOnly, String... scenario) throws IOException {
        Path built = legacyOnly ? legacyLibrary() : fullLibrary();
        Files.copy(built, dir.resolve("libnvidia-ml.so.1"));
        Files.write(dir.resolve("scenario.txt"), List.of(scenario), StandardCharsets.UTF_8);
        return dir;
    }

    private static Path fullLibrary() {
        if (full == null) {
            full = compile(BUILD.resolve("libnvidia-ml.so.1"));
        }
        return full;
    }

    private static Path legacyLibrary() {
        if (legacy == null) {
            legacy = compile(BUILD.resolve("legacy").resolve("libnvidia-ml.so.1"), "-DLEGACY_ONLY");
        }
        return legacy;
    }

    private static Path compile(Path output, String... defines) {
        try {
            Files.createDirectories(output.getParent());
            List<String> command = new java.util.ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-Wall",
                    "-o", output.toString()));
            command.addAll(List.of(defines));
            command.add(SOURCE.toString());
            command.add("-ldl");
            Process gcc;
            try {
                gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new AssertionError("the NVML binding tests need gcc to build the fake libnvidia-ml "
                        + "(src/test/c/fake_nvml.c), and gcc cannot be run: " + e.getMessage()
                        + ". Install gcc (apt-get install gcc) and run the tests again.", e);
            }
            String log = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
                throw new AssertionError("gcc could not build the fake libnvidia-ml: " + String.join(" ", command)
                        + "\n" + log);
            }
            return output;
        } catch (IOException e) {
            throw new AssertionError("cannot build the fake libnvidia-ml: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while building the fake libnvidia-ml", e);
        }
    }
}
