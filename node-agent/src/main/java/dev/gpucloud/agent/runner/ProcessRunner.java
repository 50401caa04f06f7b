package dev.gpucloud.agent.runner;

import dev.gpucloud.agent.logs.OutputSource;
import dev.gpucloud.agent.logs.OutputWatcher;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.secrets.AgentSeal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Runs each allocation as a real child process of the agent, on the hosts it is given (one real
 * host, or simulated hosts in tests). START launches the job's command with its GPUs in
 * CUDA_VISIBLE_DEVICES (or its MIG instance's UUID) and the gang's rank, world size and master
 * address in the environment, stdout and stderr to a file each per allocation (which an {@link OutputWatcher}
 * ships to {@code job.logs}). CHECKPOINT sends a signal
 * (SIGUSR1 by default); the workload says it saved one by writing a marker file into its checkpoint
 * directory, which becomes CHECKPOINT_SAVED. STOP sends SIGTERM to the process tree and SIGKILL
 * after a grace period. Usage is cut from the start in fixed steps until the moment the process
 * exits. Every method is synchronized: commands and ticks come from different threads.
 *
 * <p>A START's secret values come sealed for this agent where the scheduler has the stack's enrolment key
 * ({@link AgentSeal}): they are opened with the agent's own credential just before the process starts, and only
 * its environment holds them in the clear. One that does not open (sealed for another agent, altered, withheld, or
 * no credential here) fails the START with a reason that names the variable, never the value.
 */
public final class ProcessRunner implements AllocationRunner, AutoCloseable {

    /** The exit code of a START that could not run (no such GPU, bad spec...), as docker run uses. */
    public static final int EXIT_CANNOT_START = 125;

    /** The exit code of a START whose program could not be executed, as a shell uses. */
    public static final int EXIT_CANNOT_EXECUTE = 127;

    /** The file a workload writes into its checkpoint directory once a checkpoint is saved; it holds the path. */
    public static final String CHECKPOINT_MARKER = ".gpucloud-checkpoint";

    /** The file a worker's stdout goes to, in its working directory. */
    public static final String LOG_FILE = "output.log";

    /** The file a worker's stderr goes to, next to its stdout's. */
    public static final String ERR_FILE = "stderr.log";

    static final int REMEMBERED = 100_000;
    private static final int MAX_MARKER_BYTES = 4096;

    private final RunnerSettings settings;
    private final Clock clock;
    private final MigProvisioner mig;
    /** What opens the secret values sealed for this agent; null for an agent without enrolment credential. */
    private final AgentSeal own;
    private final Map<String, GpuLedger> hosts = new LinkedHashMap<>();
    private final Map<String, ProcessRun> runs = new LinkedHashMap<>();
    private final RecentIds seenCommands = new RecentIds(REMEMBERED);
    private final LastWords lastWords = new LastWords(REMEMBERED);
    private OutputWatcher output = OutputWatcher.NONE;

    /** A runner that cannot change the hosts' MIG layout: a slot runs only on an instance already there. */
    public ProcessRunner(List<HostInventory> hosts, RunnerSettings settings, Clock clock) {
        this(hosts, settings, clock, MigProvisioner.NONE);
    }

    /**
     * A runner that creates MIG instances through {@code mig} when a START names a slot that has
     * none yet (NVML's backend on a real host).
     */
    public ProcessRunner(List<HostInventory> hosts, RunnerSettings settings, Clock clock, MigProvisioner mig) {
        this(hosts, settings, clock, mig, null);
    }

    /**
     * A runner that opens the secret values sealed for this agent with {@code own} (its credential's seal; null for
     * an agent without one, which runs clear values only).
     */
    public ProcessRunner(List<HostInventory> hosts, RunnerSettings settings, Clock clock, MigProvisioner mig,
            AgentSeal own) {
        this.settings = settings;
        this.clock = clock;
        this.mig = mig;
        this.own = own;
        hosts.forEach(h -> this.hosts.put(h.nodeId(), new GpuLedger(h)));
    }

    /** Has {@code watcher} told of each worker's output files as it starts, and of its exit. */
    public synchronized void watchOutput(OutputWatcher watcher) {
        this.output = watcher == null ? OutputWatcher.NONE : watcher;
    }

    @Override
    public synchronized boolean owns(String nodeId) {
        return hosts.containsKey(nodeId);
    }

    @Override
    public synchronized List<RunningAllocation> running() {
        return runs.values().stream().map(ProcessRun::view).toList();
    }

    @Override
    public synchronized Reports advance() {
        Collector out = new Collector();
        advanceTo(now(), out);
        return out.reports();
    }

    @Override
    public synchronized Reports handle(NodeCommand command) {
        Instant now = now();
        Collector out = new Collector();
        advanceTo(now, out);
        GpuLedger host = hosts.get(command.nodeId());
        if (host == null) {
            out.notes.add("ignored " + command.type() + " " + command.commandId() + ": node " + command.nodeId()
                    + " is not run here");
            return out.reports();
        }
        if (!seenCommands.add(command.commandId())) {
            out.notes.add("ignored repeated command " + command.commandId() + " (" + command.type() + " "
                    + command.allocationId() + ")");
            return out.reports();
        }
        switch (command.type()) {
            case START -> start(host, command, now, out);
            case CHECKPOINT -> checkpoint(command, now, out);
            case STOP -> stop(command, now, out);
            case STATUS -> answerFromLastWords(command, now, out);
        }
        return out.reports();
    }

    /**
     * Stops every workload because the agent is going away: SIGTERM to each process tree, up to
     * {@code wait} for them to exit, SIGKILL for the rest; then their EXITED events and last usage,
     * so that no second of usage goes unreported.
     */
    public synchronized Reports stopAll(Duration wait) {
        Collector out = new Collector();
        Instant now = now();
        advanceTo(now, out);
        for (ProcessRun run : runs.values()) {
            if (run.stopCommand == null) {
                run.stopCommand = "(agent shutdown)";
                Signals.send("TERM", Signals.tree(run.process.toHandle()));
            }
        }
        long until = System.nanoTime() + wait.toNanos();
        for (ProcessRun run : runs.values()) {
            try {
                long left = until - System.nanoTime();
                if (left > 0) {
                    run.process.waitFor(left, java.util.concurrent.TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (ProcessRun run : runs.values()) {
            if (run.process.isAlive()) {
                run.killed = true;
                Signals.tree(run.process.toHandle()).forEach(pid -> ProcessHandle.of(pid)
                        .ifPresent(ProcessHandle::destroyForcibly));
                try {
                    run.process.waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        advanceTo(now(), out);
        return out.reports();
    }

    /** Kills every workload still running (the agent is going away); reports nothing. */
    @Override
    public synchronized void close() {
        for (ProcessRun run : runs.values()) {
            Signals.tree(run.process.toHandle()).forEach(pid -> ProcessHandle.of(pid)
                    .ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    private void start(GpuLedger host, NodeCommand command, Instant now, Collector out) {
        if (runs.containsKey(command.allocationId())) {
            out.notes.add("ignored START " + command.commandId() + ": " + command.allocationId() + " already runs");
            return;
        }
        AllocationEvent late = StartDeadline.late(command, now);
        if (late != null) {
            lastWords.said(late);
            out.events.add(late);
            return;
        }
        String problem = specProblem(command);
        Map<String, String> secrets = Map.of();
        if (problem == null) { // before any GPU is claimed or MIG instance made for a START that cannot run
            try {
                secrets = AgentSeal.open(command, own);
                problem = nulIn(secrets);
            } catch (AgentSeal.Refused e) {
                problem = e.getMessage();
            }
        }
        GpuLedger.Result result = problem == null
                ? host.check(command.gpuIndices(), command.migInstanceUuid(), command.milliGpu()) : null;
        GpuLedger.Claim claim = result == null ? null : result.claim();
        if (problem == null && claim == null && result.create() != null) {
            try {
                claim = createMig(host, result.create(), out);
            } catch (MigRefusedException e) {
                problem = "MIG slot " + command.migInstanceUuid() + " on GPU " + result.create().gpuIndex() + " of "
                        + host.host().nodeId() + ": " + e.getMessage();
            }
        } else if (problem == null && claim == null) {
            if (result.busy()) {
                AllocationEvent refused = AllocationEvent.busy(command.allocationId(), command.jobId(),
                        command.nodeId(), now, "cannot start: " + result.problem(), result.heldBy());
                lastWords.said(refused);
                out.events.add(refused);
                return;
            }
            problem = result.problem();
        }
        if (problem != null) {
            refuse(command, EXIT_CANNOT_START, problem, now, out);
            return;
        }
        Path workDir = settings.runDir().resolve(safeName(command.allocationId()));
        Path checkpointDir = localCheckpointDir(command.checkpointDir(), workDir);
        Path log = workDir.resolve(LOG_FILE);
        Path err = workDir.resolve(ERR_FILE);
        try {
            Files.createDirectories(workDir);
            Files.createDirectories(checkpointDir);
            Files.deleteIfExists(checkpointDir.resolve(CHECKPOINT_MARKER));
        } catch (IOException | RuntimeException e) {
            refuse(command, EXIT_CANNOT_START, "cannot prepare " + workDir + ": " + e.getMessage(), now, out);
            return;
        }
        ProcessBuilder builder = new ProcessBuilder(command.command())
                .directory(workDir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile()));
        builder.environment().putAll(environment(command, secrets, claim, checkpointDir));
        Process process;
        try {
            process = builder.start();
        } catch (IOException | RuntimeException e) {
            refuse(command, EXIT_CANNOT_EXECUTE, "cannot execute " + command.command().get(0) + ": " + e.getMessage(),
                    now, out);
            return;
        }
        host.hold(command.allocationId(), claim);
        ProcessRun run = new ProcessRun(command, host, claim, process, now, checkpointDir, log,
                new UsageMeter(now, settings.usageInterval()));
        process.onExit().thenRun(() -> run.exitedAt = clock.instant().truncatedTo(ChronoUnit.MILLIS));
        runs.put(command.allocationId(), run);
        output.started(new OutputSource(command.allocationId(), command.jobId(), command.tenant(),
                host.host().nodeId(), command.rank(), log, err));
        String what = claim.migInstanceUuid() != null
                ? "MIG instance " + claim.migInstanceUuid() + " of GPU " + claim.gpuIndices()
                : "GPUs " + claim.gpuIndices();
        String resume = command.resumeFrom() == null ? "" : ", resuming from " + command.resumeFrom();
        AllocationEvent started = new AllocationEvent(command.allocationId(), command.jobId(), host.host().nodeId(),
                AllocationEventType.STARTED, now, null, null,
                what + " as " + claim.sku().code() + ": pid " + process.pid() + ", rank " + command.rank() + " of "
                        + command.worldSize() + ", log " + log + resume, claim.migInstanceUuid());
        lastWords.said(started);
        out.events.add(started);
    }

    /**
     * Makes the instance a slot plan asks for: the idle instances in its way are destroyed, then it
     * is created; the ledger follows each step, so it stays true when a later step is refused.
     */
    private GpuLedger.Claim createMig(GpuLedger host, MigSlots.Plan plan, Collector out) {
        String where = " GPU " + plan.gpuIndex() + " of " + host.host().nodeId();
        for (MigInstance idle : plan.destroy()) {
            try {
                mig.destroy(plan.gpuIndex(), idle);
            } catch (MigRefusedException e) {
                throw new MigRefusedException("cannot destroy idle instance " + MigSlots.describe(idle)
                        + " in its way: " + e.getMessage(), e);
            }
            host.changeMig(plan.gpuIndex(), List.of(idle), null);
            out.notes.add("destroyed idle MIG instance " + MigSlots.describe(idle) + " of" + where);
            out.inventoryChanged.add(host.host().nodeId());
        }
        MigInstance created = mig.create(plan.gpuIndex(), plan.profile(), plan.start());
        host.changeMig(plan.gpuIndex(), List.of(), created);
        out.notes.add("created MIG instance " + MigSlots.describe(created) + " on" + where);
        out.inventoryChanged.add(host.host().nodeId());
        return host.migClaim(plan.gpuIndex(), created);
    }

    private void checkpoint(NodeCommand command, Instant now, Collector out) {
        ProcessRun run = runs.get(command.allocationId());
        if (run == null) {
            answerFromLastWords(command, now, out);
            return;
        }
        Instant deadline = command.deadline() != null && command.deadline().isAfter(now)
                ? command.deadline() : now.plus(settings.checkpointTimeout());
        String failed = Signals.send(settings.checkpointSignal(), List.of(run.process.pid()));
        if (failed != null) {
            out.notes.add("CHECKPOINT " + command.commandId() + " of " + run.allocationId() + ": " + failed);
            return;
        }
        run.checkpoints.add(new ProcessRun.PendingCheckpoint(command.commandId(), deadline));
        out.notes.add("asked " + run.allocationId() + " (pid " + run.process.pid() + ") for a checkpoint with SIG"
                + settings.checkpointSignal() + " by " + deadline + " (command " + command.commandId() + ")");
    }

    private void stop(NodeCommand command, Instant now, Collector out) {
        ProcessRun run = runs.get(command.allocationId());
        if (run == null) {
            answerFromLastWords(command, now, out);
            return;
        }
        if (run.stopCommand != null) {
            out.notes.add("ignored STOP " + command.commandId() + ": " + run.allocationId() + " is already stopping ("
                    + run.stopCommand + ")");
            return;
        }
        run.stopCommand = command.commandId() + (command.reason() == null ? "" : " (" + command.reason() + ")");
        run.stopAt = now;
        run.killAt = now.plus(settings.stopGrace());
        String failed = Signals.send("TERM", Signals.tree(run.process.toHandle()));
        out.notes.add("sent SIGTERM to " + run.allocationId() + " (pid " + run.process.pid() + ") for command "
                + command.commandId() + (failed == null ? "" : ": " + failed) + "; SIGKILL at " + run.killAt);
    }

    /** A STATUS, or a CHECKPOINT or STOP for an allocation that does not run here, answered as {@link LastWords} says. */
    private void answerFromLastWords(NodeCommand command, Instant now, Collector out) {
        lastWords.answer(command, now, out.events, out.notes);
    }

    private void refuse(NodeCommand command, int code, String problem, Instant now, Collector out) {
        AllocationEvent refused = new AllocationEvent(command.allocationId(), command.jobId(), command.nodeId(),
                AllocationEventType.EXITED, now, code, null, "cannot start: " + problem);
        lastWords.said(refused);
        out.events.add(refused);
    }

    /** What is wrong with a START's spec that no host could run, or null. */
    static String specProblem(NodeCommand command) {
        if (command.command().isEmpty()) {
            return "the command is empty";
        }
        if (command.command().get(0) == null || command.command().get(0).isBlank()) {
            return "the command's program is blank";
        }
        for (String arg : command.command()) {
            if (arg == null || arg.indexOf('\0') >= 0) {
                return "a command argument is null or holds a NUL character";
            }
        }
        for (Map.Entry<String, String> e : command.env().entrySet()) {
            String key = e.getKey();
            if (key == null || key.isEmpty() || key.indexOf('=') >= 0 || key.indexOf('\0') >= 0) {
                return "env name '" + key + "' is not a variable name";
            }
            if (e.getValue() == null || e.getValue().indexOf('\0') >= 0) {
                return "env " + key + " is null or holds a NUL character";
            }
        }
        for (Map.Entry<String, String> e : command.secretEnv().entrySet()) {
            String key = e.getKey();
            if (key == null || key.isEmpty() || key.indexOf('=') >= 0 || key.indexOf('\0') >= 0) {
                return "secret env name '" + key + "' is not a variable name";
            }
            if (command.env().containsKey(key)) {
                return "env " + key + " is both secret and not";
            }
            if (e.getValue() == null || e.getValue().indexOf('\0') >= 0) { // the value itself is never quoted
                return "secret env " + key + " is null or holds a NUL character";
            }
        }
        if (command.worldSize() < 1 || command.rank() >= command.worldSize()) {
            return "rank " + command.rank() + " is not below world size " + command.worldSize();
        }
        return null;
    }

    /** The first opened secret value that holds a NUL (no process environment can), by its name; or null. */
    private static String nulIn(Map<String, String> secrets) {
        for (Map.Entry<String, String> e : secrets.entrySet()) {
            if (e.getValue().indexOf('\0') >= 0) {
                return "secret env " + e.getKey() + " is null or holds a NUL character";
            }
        }
        return null;
    }

    /**
     * The job's environment, its secret variables opened ({@code secrets}, which only the process sees: they are
     * never logged or reported), then the runner's: the GPUs, the gang and the checkpoint locations.
     */
    private Map<String, String> environment(NodeCommand command, Map<String, String> secrets, GpuLedger.Claim claim,
            Path checkpointDir) {
        Map<String, String> env = new LinkedHashMap<>(command.env());
        env.putAll(secrets);
        env.put("CUDA_VISIBLE_DEVICES", claim.migInstanceUuid() != null ? claim.migInstanceUuid()
                : claim.gpuIndices().stream().map(String::valueOf).collect(Collectors.joining(",")));
        env.put("GPUCLOUD_ALLOCATION_ID", command.allocationId());
        env.put("GPUCLOUD_JOB_ID", command.jobId());
        env.put("GPUCLOUD_TENANT", command.tenant());
        env.put("GPUCLOUD_CHECKPOINT_DIR", checkpointDir.toString());
        env.put("GPUCLOUD_CHECKPOINT_MARKER", checkpointDir.resolve(CHECKPOINT_MARKER).toString());
        if (command.checkpointDir() != null && !command.checkpointDir().isBlank()) {
            env.put("GPUCLOUD_CHECKPOINT_URI", command.checkpointDir());
        }
        if (command.resumeFrom() != null && !command.resumeFrom().isBlank()) {
            env.put("GPUCLOUD_RESUME_FROM", command.resumeFrom());
        }
        if (claim.milliPerGpu() > 0 && claim.milliPerGpu() < 1000) {
            env.put("GPUCLOUD_MILLI_GPU", Integer.toString(claim.milliPerGpu()));
        }
        env.put("RANK", Integer.toString(command.rank()));
        env.put("WORLD_SIZE", Integer.toString(command.worldSize()));
        env.put("LOCAL_RANK", "0");
        if (command.masterAddr() != null && !command.masterAddr().isBlank()) {
            String addr = command.masterAddr().strip();
            int colon = addr.lastIndexOf(':');
            if (colon > 0 && !addr.endsWith("]") && addr.indexOf(':') == colon) {
                env.put("MASTER_ADDR", addr.substring(0, colon));
                env.put("MASTER_PORT", addr.substring(colon + 1));
            } else {
                env.put("MASTER_ADDR", addr);
            }
        }
        return env;
    }

    /** A local checkpoint directory: the one asked for when it is a local absolute path, else one in the run's folder. */
    private static Path localCheckpointDir(String asked, Path workDir) {
        if (asked != null && asked.startsWith("/") && !asked.contains("\0")) {
            return Path.of(asked).normalize();
        }
        return workDir.resolve("checkpoints");
    }

    /** An allocation id as a single, harmless file name. */
    public static String safeName(String id) {
        String name = id.replaceAll("[^A-Za-z0-9._-]", "_");
        if (name.chars().allMatch(c -> c == '.')) {
            name = "_" + name;
        }
        return name.length() > 200 ? name.substring(0, 200) : name;
    }

    private void advanceTo(Instant now, Collector out) {
        for (ProcessRun run : new ArrayList<>(runs.values())) {
            Instant exitedAt = run.exitedAt;
            if (exitedAt == null && !run.process.isAlive()) {
                exitedAt = now;
            }
            readMarker(run, now, out);
            if (exitedAt != null) {
                finish(run, exitedAt.isAfter(now) ? now : exitedAt, out);
                continue;
            }
            if (run.killAt != null && !run.killed && !now.isBefore(run.killAt)) {
                run.killed = true;
                Signals.tree(run.process.toHandle()).forEach(pid -> ProcessHandle.of(pid)
                        .ifPresent(ProcessHandle::destroyForcibly));
                out.notes.add(run.allocationId() + " did not stop within " + seconds(settings.stopGrace())
                        + " of SIGTERM: sent SIGKILL");
            }
            run.checkpoints.removeIf(pending -> {
                if (now.isAfter(pending.deadline())) {
                    out.notes.add("checkpoint of " + run.allocationId() + " for command " + pending.commandId()
                            + " missed its deadline " + pending.deadline());
                    return true;
                }
                return false;
            });
            usage(run, run.meter.due(now), out);
        }
    }

    /** A marker file in the checkpoint directory says a checkpoint was saved; it is read once and removed. */
    private void readMarker(ProcessRun run, Instant now, Collector out) {
        Path marker = run.checkpointDir.resolve(CHECKPOINT_MARKER);
        if (!Files.isRegularFile(marker)) {
            return;
        }
        String content;
        Instant savedAt;
        try {
            byte[] bytes;
            try (var in = Files.newInputStream(marker)) {
                bytes = in.readNBytes(MAX_MARKER_BYTES);
            }
            savedAt = Files.getLastModifiedTime(marker).toInstant().truncatedTo(ChronoUnit.MILLIS);
            Files.delete(marker);
            content = new String(bytes, StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
        } catch (IOException e) {
            out.notes.add("cannot read checkpoint marker " + marker + " of " + run.allocationId() + ": " + e.getMessage());
            return;
        }
        if (savedAt.isBefore(run.startedAt)) {
            savedAt = run.startedAt;
        }
        if (savedAt.isAfter(now)) {
            savedAt = now;
        }
        String path;
        if (content.isEmpty() || content.indexOf('\0') >= 0) {
            path = run.checkpointDir.toString();
        } else if (content.startsWith("/") || content.contains("://")) {
            path = content;
        } else {
            path = run.checkpointDir.resolve(content).normalize().toString();
        }
        ProcessRun.PendingCheckpoint asked = run.checkpoints.isEmpty() ? null : run.checkpoints.remove(0);
        out.events.add(new AllocationEvent(run.allocationId(), run.start.jobId(), run.host.host().nodeId(),
                AllocationEventType.CHECKPOINT_SAVED, savedAt, null, path,
                asked == null ? "saved by the workload on its own" : "saved for command " + asked.commandId()));
    }

    private void finish(ProcessRun run, Instant exitedAt, Collector out) {
        Instant end = exitedAt.isBefore(run.meter.reportedUntil()) ? run.meter.reportedUntil() : exitedAt;
        usage(run, run.meter.close(end), out);
        int code = run.process.exitValue();
        String detail;
        if (run.stopCommand != null) {
            detail = "stopped by command " + run.stopCommand + " after "
                    + seconds(Duration.between(run.startedAt, end)) + ", exit code " + code
                    + (run.killed ? " (SIGKILL after the " + seconds(settings.stopGrace()) + " grace)" : "");
        } else {
            detail = "exited " + code + " after " + seconds(Duration.between(run.startedAt, end));
        }
        if (!run.checkpoints.isEmpty()) {
            detail += "; " + run.checkpoints.size() + " checkpoint(s) asked for and not saved";
        }
        detail += "; log " + run.log;
        AllocationEvent exited = new AllocationEvent(run.allocationId(), run.start.jobId(), run.host.host().nodeId(),
                AllocationEventType.EXITED, end, code, null, detail);
        out.events.add(exited);
        run.host.release(run.allocationId());
        runs.remove(run.allocationId());
        output.exited(run.allocationId());
        lastWords.said(exited);
    }

    private void usage(ProcessRun run, List<Interval> intervals, Collector out) {
        HostInventory host = run.host.host();
        for (Interval interval : intervals) {
            out.usage.add(new UsageEvent(run.allocationId(), run.start.jobId(), run.start.tenant(), host.nodeId(),
                    interval.from(), interval.to(), run.claim.sku(), run.claim.units(), host.capacityType(),
                    host.zone()));
        }
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    static String seconds(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 1000 == 0) {
            return millis / 1000 + " s";
        }
        return String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
    }

    private static final class Collector {
        final List<AllocationEvent> events = new ArrayList<>();
        final List<UsageEvent> usage = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        final java.util.Set<String> inventoryChanged = new java.util.LinkedHashSet<>();

        Reports reports() {
            return new Reports(events, usage, notes, List.copyOf(inventoryChanged));
        }
    }
}
