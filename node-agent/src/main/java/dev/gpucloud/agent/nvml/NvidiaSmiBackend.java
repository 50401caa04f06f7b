package dev.gpucloud.agent.nvml;

import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The fallback where NVML cannot be loaded: every answer runs {@code nvidia-smi --query-gpu} once,
 * with a timeout. It knows no MIG layout, NVLink, energy or ECC counts. A run that fails, hangs or
 * prints lines it cannot parse is recorded as a fault; the GPUs it could read are still reported.
 */
public final class NvidiaSmiBackend implements GpuBackend {

    private final String command;
    private final Duration timeout;
    private final HostFacts host;
    private final Clock clock;
    private final FaultLog faults = new FaultLog();

    public NvidiaSmiBackend(String command, Duration timeout, HostFacts host, Clock clock) {
        this.command = command;
        this.timeout = timeout;
        this.host = host;
        this.clock = clock;
    }

    /** Finds the command (a path, or a name looked up on PATH) and checks that one query answers. */
    public static NvidiaSmiBackend open(String command, Duration timeout, HostFacts host, Clock clock)
            throws NvmlUnavailableException {
        if (locate(command).isEmpty()) {
            throw new NvmlUnavailableException("no executable " + command + (command.contains("/") ? "" : " on PATH"));
        }
        NvidiaSmiBackend backend = new NvidiaSmiBackend(command, timeout, host, clock);
        try {
            backend.query();
        } catch (IOException e) {
            throw new NvmlUnavailableException(e.getMessage());
        }
        return backend;
    }

    /** The executable a command names, if there is one. */
    static Optional<Path> locate(String command) {
        if (command.contains("/")) {
            Path path = Path.of(command);
            return Files.isExecutable(path) && !Files.isDirectory(path) ? Optional.of(path) : Optional.empty();
        }
        String pathVariable = System.getenv("PATH");
        if (pathVariable == null) {
            return Optional.empty();
        }
        for (String dir : pathVariable.split(File.pathSeparator)) {
            if (dir.isBlank()) {
                continue;
            }
            Path candidate = Path.of(dir, command);
            if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    @Override
    public String name() {
        return "nvidia-smi";
    }

    /** The faults recorded lately, oldest first. */
    public List<GpuFault> faults() {
        return faults.recent();
    }

    @Override
    public synchronized List<HostInventory> inventory() {
        Instant now = clock.instant();
        List<GpuDevice> gpus = new ArrayList<>();
        for (NvidiaSmiCsv.Row row : rows(now)) {
            if (row.memoryTotalMib() == null || row.memoryTotalMib() < 1) {
                faults.record(now, row.index(), "nvidia-smi reports no memory.total for GPU " + row.index());
                continue;
            }
            gpus.add(new GpuDevice(row.index(), row.uuid(), row.name(), row.memoryTotalMib(), row.pciBusId(), -1,
                    false, List.of()));
        }
        return List.of(new HostInventory(host.nodeId(), host.hostname(), host.instanceType(), host.zone(),
                host.capacityType(), host.priceMicrosPerHour(), host.cpuMillis(), host.memoryMib(), host.rdmaFabric(),
                host.switchPath(), gpus, List.of(), name(), now));
    }

    @Override
    public synchronized List<TelemetrySample> sample() {
        Instant now = clock.instant();
        List<GpuReading> readings = new ArrayList<>();
        for (NvidiaSmiCsv.Row row : rows(now)) {
            double util = row.utilizationGpu() == null ? 0.0 : Math.min(100, Math.max(0, row.utilizationGpu()));
            readings.add(new GpuReading(row.index(), row.uuid(), row.name(), row.pciBusId(), util,
                    row.utilizationMemory(), nonNegative(row.memoryUsedMib()), nonNegative(row.memoryFreeMib()),
                    row.powerWatts(), null, row.temperatureC(), null, row.smClockMhz(), row.memClockMhz(), null, null,
                    null, null, null, null, null, List.of()));
        }
        return List.of(new TelemetrySample(host.nodeId(), host.hostname(), now, readings));
    }

    private List<NvidiaSmiCsv.Row> rows(Instant now) {
        NvidiaSmiCsv.Parsed parsed;
        try {
            parsed = query();
        } catch (IOException e) {
            faults.record(now, -1, e.getMessage());
            return List.of();
        }
        for (String problem : parsed.problems()) {
            faults.record(now, -1, "nvidia-smi output " + problem);
        }
        if (parsed.problems().isEmpty()) {
            faults.clear(-1, now);
        }
        return parsed.rows();
    }

    /** Runs the query once; an IOException says why it gave no output to parse. */
    NvidiaSmiCsv.Parsed query() throws IOException {
        List<String> argv = List.of(command, "--query-gpu=" + NvidiaSmiCsv.FIELDS, "--format=csv,noheader,nounits");
        Process process;
        try {
            process = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new IOException("cannot run " + command + ": " + e.getMessage(), e);
        }
        CompletableFuture<String> stdout = readAsync(process.getInputStream());
        CompletableFuture<String> stderr = readAsync(process.getErrorStream());
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new IOException(command + " did not answer within " + timeout.toMillis() + " ms; killed");
            }
            String out = stdout.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (process.exitValue() != 0) {
                String err = stderr.get(timeout.toMillis(), TimeUnit.MILLISECONDS).strip();
                String reason = err.isEmpty() ? out.strip() : err;
                throw new IOException(command + " exited with " + process.exitValue()
                        + (reason.isEmpty() ? "" : ": " + reason.lines().findFirst().orElse("")));
            }
            return NvidiaSmiCsv.parse(out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException(command + " interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            throw new IOException("cannot read the output of " + command + ": " + e, e);
        }
    }

    /** Drains a stream on a thread of its own, so a chatty stderr cannot block stdout. */
    private static CompletableFuture<String> readAsync(InputStream stream) {
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (stream) {
                result.complete(new String(stream.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                result.complete("");
            }
        }, "nvidia-smi-reader");
        reader.setDaemon(true);
        reader.start();
        return result;
    }

    private static long nonNegative(Long value) {
        return value == null || value < 0 ? 0 : value;
    }
}
