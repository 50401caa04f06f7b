package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.scheduler.sim.OptionsTable;
import dev.gpucloud.scheduler.sim.charts.SvgChart;
import dev.gpucloud.scheduler.sim.trace.ErrorMode;
import dev.gpucloud.scheduler.sim.trace.Loaded;
import dev.gpucloud.scheduler.sim.trace.PhillyTraceLoader;
import dev.gpucloud.scheduler.sim.trace.TraceFormatException;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * {@code gpucloud simulate elastic}: the elastic fleet against static on-demand fleets sized for the peak and the
 * mean of demand, on a Philly-format job list, on both halves of the list with the same settings. Prints a table
 * and writes a summary CSV, each window's time series (CSV) and a chart of fleet size and queue length (SVG). Exit
 * status 0, 1 when the trace cannot be used, 2 on bad usage.
 */
public final class ElasticMain {

    /** The options: name, value label (null for a flag), what it does. Parsed and explained by picocli. */
    private static final String[][] OPTIONS = {
        {"trace", "FILE", "a Philly-format job list (timestamp,duration,num_gpus,gpu_time,cluster)"},
        {"half", "first|second|both", "which half of the jobs by submission time to run (default both, one after"
            + " the other, with the same settings)"},
        {"scan-interval", "DUR", "how often the autoscaler decides, virtual time (default 30s)"},
        {"boot-delay", "DUR", "how long a host boots before it takes work (default 60s)"},
        {"idle-timeout", "DUR", "an unneeded host is released or drained after this long (default 10m)"},
        {"low-utilization", "F", "drain hosts below this utilization when their jobs can move; 0: never (default 0.70)"},
        {"checkpoint-interval", "DUR", "jobs checkpoint this often; a reclaim loses at most this much (default 30m)"},
        {"resume-overhead", "DUR", "what each resume from a checkpoint costs (default 30s)"},
        {"non-checkpointable", "F", "the fraction of jobs that cannot be checkpointed and run on demand (default 0.10)"},
        {"interruption-rate", "R", "spot reclaims per spot host-hour (default 0.02)"},
        {"spot-gpus-per-zone", "N", "spot GPUs each zone sells at a time (default 512)"},
        {"seed", "N", "the seed of the provider and of which jobs are checkpointable (default 42)"},
        {"out", "DIR", "where the CSV files and charts go (default sim-results/elastic)"},
        {"lenient", null, "skip malformed trace rows (default: stop at the first, naming file and line)"},
    };

    static CommandLine commandLine() {
        return OptionsTable.commandLine("gpucloud simulate elastic",
                "Usage: gpucloud simulate elastic --trace FILE [options]",
                "Runs a job list on the elastic fleet (the autoscaler's core and the simulated provider) and on static"
                        + " on-demand fleets sized for the peak and the mean of demand; prints cost, JCT and idle"
                        + " GPU-hours, writes CSV files and an SVG chart. Durations: 90s, 10m, 2h or plain seconds.",
                OPTIONS);
    }

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> opts = new LinkedHashMap<>();

    public ElasticMain(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs the command; returns the exit status. */
    public int run(String[] args) {
        String command = "./gpucloud simulate elastic " + String.join(" ", args);
        try {
            ParseResult parsed = commandLine().parseArgs(args);
            if (parsed.isUsageHelpRequested()) {
                out.print(commandLine().getUsageMessage());
                return 0;
            }
            if (!parsed.unmatched().isEmpty()) {
                throw new ParameterException(commandLine(), "unexpected argument '" + parsed.unmatched().get(0) + "'");
            }
            for (OptionSpec o : parsed.matchedOptions()) {
                opts.put(o.longestName().substring(2), o.arity().max() == 0 ? "true" : o.getValue());
            }
            if (!opts.containsKey("trace")) {
                throw new ParameterException(commandLine(), "--trace is required");
            }
        } catch (ParameterException | IllegalArgumentException e) {
            err.println("simulate elastic: " + e.getMessage());
            err.print(commandLine().getUsageMessage());
            return 2;
        }
        ElasticSettings settings;
        List<String> halves;
        try {
            settings = settings();
            String half = opts.getOrDefault("half", "both");
            halves = switch (half) {
                case "first" -> List.of("first");
                case "second" -> List.of("second");
                case "both" -> List.of("first", "second");
                default -> throw new IllegalArgumentException("--half must be first, second or both, got " + half);
            };
        } catch (IllegalArgumentException e) {
            err.println("simulate elastic: " + e.getMessage());
            return 2;
        }
        try {
            Path trace = Path.of(opts.get("trace"));
            Loaded<TraceJob> loaded = PhillyTraceLoader.load(trace,
                    opts.containsKey("lenient") ? ErrorMode.LENIENT : ErrorMode.STRICT);
            if (loaded.skippedRows() > 0) {
                err.println("simulate elastic: skipped " + loaded.skippedRows() + " malformed row(s) of "
                        + loaded.file() + ", first: " + loaded.problems().get(0));
            }
            Path outDir = Path.of(opts.getOrDefault("out", "sim-results/elastic"));
            Files.createDirectories(outDir);
            String name = trace.getFileName().toString().replaceFirst("\\.csv$", "");
            List<ElasticExperiment.Window> windows = new ArrayList<>();
            for (String h : halves) {
                List<TraceJob> jobs = ElasticExperiment.half(loaded.items(), h.equals("first"));
                String window = name + "-" + h;
                ElasticExperiment.Window w = ElasticExperiment.run(window, jobs, settings);
                windows.add(w);
                w.series().writeCsv(outDir.resolve(window + "-elastic.timeseries.csv"), command);
                chart(w, command).write(outDir.resolve(window + "-elastic.svg"));
            }
            writeSummary(outDir.resolve(name + "-elastic-summary.csv"), windows, command);
            printTable(windows);
            return 0;
        } catch (TraceFormatException | IllegalStateException e) {
            err.println("simulate elastic: " + e.getMessage());
            return 1;
        } catch (IOException | UncheckedIOException e) {
            err.println("simulate elastic: " + e.getMessage());
            return 1;
        }
    }

    private ElasticSettings settings() {
        ElasticSettings d = ElasticSettings.defaults();
        return new ElasticSettings(duration("scan-interval", d.scanInterval()), duration("boot-delay", d.bootDelay()),
                duration("idle-timeout", d.idleTimeout()), number("low-utilization", d.lowUtilization()),
                duration("checkpoint-interval", d.checkpointInterval()),
                duration("resume-overhead", d.resumeOverhead()), number("non-checkpointable", d.nonCheckpointable()),
                (long) number("seed", d.seed()), number("interruption-rate", d.interruptionsPerHour()),
                (int) number("spot-gpus-per-zone", d.spotGpusPerZone()), d.sampleEvery());
    }

    private double number(String key, double dflt) {
        String v = opts.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + ": '" + v + "' is not a number");
        }
    }

    private Duration duration(String key, Duration dflt) {
        String v = opts.get(key);
        return v == null ? dflt : parseDuration("--" + key, v);
    }

    /** 90s, 10m, 2h, 1d or plain seconds. */
    static Duration parseDuration(String what, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        long unit = 1_000;
        if (s.endsWith("ms")) {
            unit = 1;
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            unit = 60_000;
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("h")) {
            unit = 3_600_000;
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("d")) {
            unit = 86_400_000;
            s = s.substring(0, s.length() - 1);
        }
        try {
            double n = Double.parseDouble(s);
            if (n < 0 || Double.isNaN(n) || Double.isInfinite(n)) {
                throw new NumberFormatException();
            }
            return Duration.ofMillis(Math.round(n * unit));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": '" + v + "' is not a duration like 90s, 10m or 2h");
        }
    }

    private static SvgChart chart(ElasticExperiment.Window w, String command) {
        List<TimeSeries.Row> rows = w.series().rows();
        double[] x = new double[rows.size()];
        double[] hosts = new double[rows.size()];
        double[] queue = new double[rows.size()];
        for (int i = 0; i < x.length; i++) {
            TimeSeries.Row r = rows.get(i);
            x[i] = r.seconds() / 86_400.0;
            hosts[i] = r.launching() + r.running() + r.draining();
            queue[i] = r.queued();
        }
        return new SvgChart("Elastic fleet on " + w.name() + ": hosts and queue", "days since the window's first"
                + " submission", "hosts / queued jobs").add("hosts (all states)", x, hosts).add("queued jobs", x, queue)
                .command(command);
    }

    private static List<FleetResult> results(List<ElasticExperiment.Window> windows) {
        List<FleetResult> all = new ArrayList<>();
        for (ElasticExperiment.Window w : windows) {
            all.add(w.elastic());
            all.add(w.peak());
            all.add(w.mean());
        }
        return all;
    }

    private static final String SUMMARY_HEADER = "window,fleet,jobs,cost_usd,avg_jct_s,p99_jct_s,makespan_s,"
            + "paid_gpu_h,idle_gpu_h,idle_share,launches,releases,interruptions,requeues,lost_gpu_h,drains,spot_shortfall,wall_s";

    private static void writeSummary(Path file, List<ElasticExperiment.Window> windows, String command)
            throws IOException {
        StringBuilder b = new StringBuilder("# generated by: " + command + "\n").append(SUMMARY_HEADER).append('\n');
        for (FleetResult r : results(windows)) {
            b.append(String.format(Locale.ROOT, "%s,%s,%d,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f,%.4f,%d,%d,%d,%d,%.1f,%d,%d,%.1f%n",
                    r.window(), r.fleet(), r.jobs(), r.costUsd(), r.avgJctSeconds(), r.p99JctSeconds(),
                    r.makespanSeconds(), r.paidGpuHours(), r.idleGpuHours(), r.idleShare(), r.launches(),
                    r.releases(), r.interruptions(), r.requeues(), r.lostGpuHours(), r.drains(), r.spotShortfall(),
                    r.wallMillis() / 1000.0));
        }
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    }

    private void printTable(List<ElasticExperiment.Window> windows) {
        out.printf(Locale.ROOT, "%-14s %-12s %6s %13s %10s %11s %11s %11s %10s %6s %8s %8s %6s%n", "window", "fleet",
                "jobs", "cost_usd", "avg_jct_s", "p99_jct_s", "makespan_s", "paid_gpu_h", "idle_gpu_h", "idle%",
                "launches", "releases", "reclaims");
        for (FleetResult r : results(windows)) {
            out.printf(Locale.ROOT, "%-14s %-12s %6d %13.0f %10.0f %11.0f %11.0f %11.0f %10.0f %5.1f%% %8d %8d %6d%n",
                    r.window(), r.fleet(), r.jobs(), r.costUsd(), r.avgJctSeconds(), r.p99JctSeconds(),
                    r.makespanSeconds(), r.paidGpuHours(), r.idleGpuHours(), 100 * r.idleShare(), r.launches(),
                    r.releases(), r.interruptions());
        }
        for (ElasticExperiment.Window w : windows) {
            double saving = 1 - w.elastic().costUsd() / w.peak().costUsd();
            double jct = w.elastic().avgJctSeconds() / w.peak().avgJctSeconds() - 1;
            out.printf(Locale.ROOT, "%s: demand peak %d GPUs (%d hosts), mean %.0f GPUs (%d hosts); elastic costs"
                    + " %.1f%% less than the peak fleet, average JCT %+.1f%%, idle %.1f%% of paid GPU-hours%n",
                    w.name(), w.demand().peakGpus(), w.peakHosts(), w.demand().meanGpus(), w.meanHosts(),
                    100 * saving, 100 * jct, 100 * w.elastic().idleShare());
        }
    }
}
