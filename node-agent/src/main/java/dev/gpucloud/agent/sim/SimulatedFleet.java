package dev.gpucloud.agent.sim;

import dev.gpucloud.agent.logs.OutputSource;
import dev.gpucloud.agent.logs.OutputWatcher;
import dev.gpucloud.agent.runner.GpuLedger;
import dev.gpucloud.agent.runner.ProcessRunner;
import dev.gpucloud.agent.runner.LastWords;
import dev.gpucloud.agent.runner.RecentIds;
import dev.gpucloud.agent.runner.StartDeadline;
import dev.gpucloud.agent.runner.Interval;
import dev.gpucloud.agent.runner.UsageMeter;
import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.agent.runner.RunningAllocation;
import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.AllocationEventType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.TelemetrySample;
import dev.gpucloud.contracts.events.UsageEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A fleet of simulated GPU hosts run by one agent: it describes them, samples their GPUs, and runs
 * the allocations the scheduler sends them on a clock it is given, so tests move time instead of
 * sleeping. A run ends when its plan says ({@link RunPlan}) or when stopped; its usage is cut
 * into contiguous intervals from its start to its end. Every method is synchronized: commands and
 * ticks may come from different threads.
 */
public final class SimulatedFleet implements GpuBackend, AllocationRunner {

    /** The exit code of a START that could not run (no such GPU, GPU busy...), as docker run uses. */
    public static final int EXIT_CANNOT_START = 125;

    /** The exit code of a run ended by STOP: killed by SIGTERM (128 + 15). */
    public static final int EXIT_STOPPED = 143;

    /** How many command ids the fleet remembers to drop repeats. */
    static final int REMEMBERED_COMMANDS = 100_000;

    private final SimulationSettings settings;
    private final Clock clock;
    private final TelemetryModel telemetry;
    private final Map<String, SimulatedHost> hosts = new LinkedHashMap<>();
    private final Map<String, SimulatedRun> runs = new LinkedHashMap<>();
    private final RecentIds seenCommands = new RecentIds(REMEMBERED_COMMANDS);
    private final LastWords lastWords = new LastWords(REMEMBERED_COMMANDS);
    private OutputWatcher output = OutputWatcher.NONE;
    /** Where each run writes the lines a simulated worker says; null: runs say nothing. */
    private Path outputDir;

    public SimulatedFleet(SimulationSettings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
        this.telemetry = new TelemetryModel(settings.seed());
        for (SimulatedHost host : FleetSpec.hosts(settings.fleet(), settings.nodePrefix(), settings.zone())) {
            hosts.put(host.nodeId(), host);
        }
    }

    @Override
    public String name() {
        return "simulated";
    }

    /**
     * Has each run write what a worker would say (that it started, on which GPUs and for how long; each checkpoint it
     * saved; how it ended) to {@code dir/ALLOCATION/output.log}, as a process runner's worker writes its stdout, and
     * tells {@code watcher} of it, so a simulated fleet's jobs have output to ship. Null turns it off.
     */
    public synchronized void watchOutput(OutputWatcher watcher, Path dir) {
        this.output = watcher == null ? OutputWatcher.NONE : watcher;
        this.outputDir = watcher == null ? null : dir;
    }

    /** Appends one line to what {@code run}'s worker said; a disk that refuses costs the line, not the run. */
    private void say(SimulatedRun run, Instant at, String line) {
        if (run.output == null) {
            return;
        }
        try {
            Files.writeString(run.output, at + " " + line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException | RuntimeException e) {
            // the simulated worker's words are not worth failing its run for
        }
    }

    /** The hosts, in the order the spec lists them. */
    public synchronized List<SimulatedHost> hosts() {
        return List.copyOf(hosts.values());
    }

    @Override
    public synchronized List<HostInventory> inventory() {
        Instant now = now();
        return hosts.values().stream().map(h -> h.inventory(now)).toList();
    }

    @Override
    public synchronized List<TelemetrySample> sample() {
        Instant now = now();
        return hosts.values().stream().map(h -> telemetry.sample(h, now)).toList();
    }

    @Override
    public synchronized boolean owns(String nodeId) {
        return hosts.containsKey(nodeId);
    }

    @Override
    public synchronized List<RunningAllocation> running() {
        return runs.values().stream().map(SimulatedRun::view).toList();
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
        // What was due before the command happened first: a run that ended is gone before a STOP.
        advanceTo(now, out);
        SimulatedHost host = hosts.get(command.nodeId());
        if (host == null) {
            out.notes.add("ignored " + command.type() + " " + command.commandId() + ": node " + command.nodeId()
                    + " is not simulated here");
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

    private void start(SimulatedHost host, NodeCommand command, Instant now, Collector out) {
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
        GpuLedger.Result result = host.check(command.gpuIndices(), command.migInstanceUuid(), command.milliGpu());
        if (result.create() != null) {
            List<String> changes = new ArrayList<>();
            result = new GpuLedger.Result(host.createMig(result.create(), changes), null, null);
            out.notes.addAll(changes);
            out.inventoryChanged.add(host.nodeId());
        }
        if (result.claim() == null) {
            AllocationEvent refused = result.busy()
                    ? AllocationEvent.busy(command.allocationId(), command.jobId(), host.nodeId(), now,
                            "cannot start: " + result.problem(), result.heldBy())
                    : new AllocationEvent(command.allocationId(), command.jobId(), host.nodeId(),
                            AllocationEventType.EXITED, now, EXIT_CANNOT_START, null, "cannot start: " + result.problem());
            lastWords.said(refused);
            out.events.add(refused);
            return;
        }
        RunPlan plan = RunPlan.of(command.command(), command.env(), settings.defaultRunDuration());
        host.hold(command.allocationId(), result.claim());
        SimulatedRun run = new SimulatedRun(command, host, result.claim(), plan, now,
                new UsageMeter(now, settings.usageInterval()));
        runs.put(command.allocationId(), run);
        if (outputDir != null) {
            try {
                Path dir = outputDir.resolve(ProcessRunner.safeName(command.allocationId()));
                Files.createDirectories(dir);
                run.output = dir.resolve(ProcessRunner.LOG_FILE);
                output.started(new OutputSource(command.allocationId(), command.jobId(), command.tenant(),
                        host.nodeId(), command.rank(), run.output, dir.resolve(ProcessRunner.ERR_FILE)));
            } catch (IOException | RuntimeException e) {
                out.notes.add("cannot write the output of " + command.allocationId() + ": " + e.getMessage());
            }
        }
        say(run, now, "simulated worker " + command.rank() + " of " + command.worldSize() + " on " + host.nodeId()
                + " GPUs " + result.claim().gpuIndices() + ": " + String.join(" ", command.command()) + " for "
                + seconds(plan.duration()) + (command.resumeFrom() == null ? "" : ", resuming from "
                + command.resumeFrom()));
        String what = result.claim().migInstanceUuid() != null
                ? "MIG instance " + result.claim().migInstanceUuid() + " of GPU " + result.claim().gpuIndices()
                : "GPUs " + result.claim().gpuIndices();
        String resume = command.resumeFrom() == null ? "" : ", resuming from " + command.resumeFrom();
        AllocationEvent started = new AllocationEvent(command.allocationId(), command.jobId(), host.nodeId(),
                AllocationEventType.STARTED, now, null, null,
                what + " as " + result.claim().sku().code() + " for " + seconds(plan.duration()) + " ("
                        + plan.reason() + ")" + resume, result.claim().migInstanceUuid());
        lastWords.said(started);
        out.events.add(started);
        // A run of no length ends at once.
        advanceTo(now, out);
    }

    private void checkpoint(NodeCommand command, Instant now, Collector out) {
        SimulatedRun run = runs.get(command.allocationId());
        if (run == null) {
            answerFromLastWords(command, now, out);
            return;
        }
        String dir = firstText(command.checkpointDir(), run.start.checkpointDir(), "/checkpoints/" + run.start.jobId());
        while (dir.length() > 1 && dir.endsWith("/")) {
            dir = dir.substring(0, dir.length() - 1);
        }
        run.checkpoints++;
        String path = dir + "/" + run.allocationId() + "-ckpt-" + run.checkpoints;
        run.saves.add(new SimulatedRun.PendingSave(now.plus(settings.checkpointSave()), path, command.commandId()));
        run.nextDue = now;
        advanceTo(now, out);
    }

    private void stop(NodeCommand command, Instant now, Collector out) {
        SimulatedRun run = runs.get(command.allocationId());
        if (run == null) {
            answerFromLastWords(command, now, out);
            return;
        }
        finish(run, now, EXIT_STOPPED, "stopped by command " + command.commandId()
                + (command.reason() == null ? "" : " (" + command.reason() + ")") + " after "
                + seconds(Duration.between(run.startedAt, now)), out);
    }

    /** A STATUS, or a CHECKPOINT or STOP for an allocation that does not run here, answered as {@link LastWords} says. */
    private void answerFromLastWords(NodeCommand command, Instant now, Collector out) {
        lastWords.answer(command, now, out.events, out.notes);
    }

    /**
     * Takes a host out of the fleet as if it had died: each allocation on it is reported LOST (its
     * usage cut now), and the host no longer answers, samples or takes commands. Null when no such
     * host is simulated here.
     */
    public synchronized Reports loseHost(String nodeId) {
        SimulatedHost host = hosts.get(nodeId);
        if (host == null) {
            return null;
        }
        Instant now = now();
        Collector out = new Collector();
        advanceTo(now, out);
        for (SimulatedRun run : new ArrayList<>(runs.values())) {
            if (run.host != host) {
                continue;
            }
            usage(run, run.meter.close(now), out);
            AllocationEvent lost = new AllocationEvent(run.allocationId(), run.start.jobId(), nodeId,
                    AllocationEventType.LOST, now, null, null, "host " + nodeId + " was lost (injected fault)");
            out.events.add(lost);
            runs.remove(run.allocationId());
            if (run.output != null) {
                output.exited(run.allocationId());
            }
            lastWords.said(lost);
        }
        hosts.remove(nodeId);
        out.notes.add("host " + nodeId + " lost (injected fault)");
        return out.reports();
    }

    /** Saves, usage and exits that fell due by {@code now}, in the order of the runs' starts. */
    private void advanceTo(Instant now, Collector out) {
        Iterator<SimulatedRun> it = runs.values().iterator(); // no copy: a command must not cost a copy of every run
        while (it.hasNext()) {
            SimulatedRun run = it.next();
            if (now.isBefore(run.nextDue)) {
                continue; // nothing of this run can have fallen due yet
            }
            Instant until = run.endsAt.isBefore(now) ? run.endsAt : now;
            Iterator<SimulatedRun.PendingSave> saves = run.saves.iterator();
            while (saves.hasNext()) {
                SimulatedRun.PendingSave save = saves.next();
                if (!save.savedAt().isAfter(until) && save.savedAt().isBefore(run.endsAt)) {
                    out.events.add(new AllocationEvent(run.allocationId(), run.start.jobId(), run.host.nodeId(),
                            AllocationEventType.CHECKPOINT_SAVED, save.savedAt(), null, save.path(),
                            "saved for command " + save.commandId()));
                    say(run, save.savedAt(), "checkpoint saved to " + save.path());
                    saves.remove();
                }
            }
            if (!run.endsAt.isAfter(now)) {
                it.remove();
                finish(run, run.endsAt, run.plan.exitCode(), "exited " + run.plan.exitCode() + " after "
                        + seconds(run.plan.duration()), out);
            } else {
                usage(run, run.meter.due(until), out);
                Instant next = run.meter.nextBoundary().isBefore(run.endsAt) ? run.meter.nextBoundary() : run.endsAt;
                for (SimulatedRun.PendingSave save : run.saves) {
                    if (save.savedAt().isBefore(next)) {
                        next = save.savedAt();
                    }
                }
                run.nextDue = next;
            }
        }
    }

    private void finish(SimulatedRun run, Instant end, int exitCode, String detail, Collector out) {
        usage(run, run.meter.close(end), out);
        if (!run.saves.isEmpty()) {
            detail += "; " + run.saves.size() + " checkpoint save(s) lost";
        }
        AllocationEvent exited = new AllocationEvent(run.allocationId(), run.start.jobId(), run.host.nodeId(),
                AllocationEventType.EXITED, end, exitCode, null, detail);
        out.events.add(exited);
        say(run, end, detail);
        run.host.release(run.allocationId());
        runs.remove(run.allocationId());
        if (run.output != null) {
            output.exited(run.allocationId());
        }
        lastWords.said(exited);
    }

    private void usage(SimulatedRun run, List<Interval> intervals, Collector out) {
        for (Interval interval : intervals) {
            out.usage.add(new UsageEvent(run.allocationId(), run.start.jobId(), run.start.tenant(), run.host.nodeId(),
                    interval.from(), interval.to(), run.claim.sku(), run.claim.units(), run.host.capacityType(),
                    run.host.zone()));
        }
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    private static String firstText(String... values) {
        for (String value : values) {
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        throw new IllegalArgumentException("no value");
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
        final List<String> inventoryChanged = new ArrayList<>();

        Reports reports() {
            return new Reports(events, usage, notes, inventoryChanged);
        }
    }
}
