package dev.gpucloud.scheduler.sim;

import dev.gpucloud.scheduler.queue.Las;
import dev.gpucloud.scheduler.sim.charts.SvgChart;
import dev.gpucloud.scheduler.sim.cluster.ClusterModel;
import dev.gpucloud.scheduler.sim.cluster.FleetSpec;
import dev.gpucloud.scheduler.sim.cluster.MuriCluster;
import dev.gpucloud.scheduler.sim.engine.Policy;
import dev.gpucloud.scheduler.sim.engine.SimCluster;
import dev.gpucloud.scheduler.sim.engine.SimConfig;
import dev.gpucloud.scheduler.sim.engine.SimResult;
import dev.gpucloud.scheduler.sim.engine.Simulator;
import dev.gpucloud.scheduler.sim.openb.GpuShareVariant;
import dev.gpucloud.scheduler.sim.openb.OpenbExperiment;
import dev.gpucloud.scheduler.sim.policies.Policies;
import dev.gpucloud.scheduler.sim.policies.Production;
import dev.gpucloud.scheduler.sim.reports.PublishedFigures;
import dev.gpucloud.scheduler.sim.reports.RunReport;
import dev.gpucloud.scheduler.sim.trace.ErrorMode;
import dev.gpucloud.scheduler.sim.trace.Loaded;
import dev.gpucloud.scheduler.sim.trace.MuriTraceLoader;
import dev.gpucloud.scheduler.sim.trace.OpenbLoader;
import dev.gpucloud.scheduler.sim.trace.OpenbNode;
import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import dev.gpucloud.scheduler.sim.trace.PhillyTraceLoader;
import dev.gpucloud.scheduler.sim.trace.TraceFormat;
import dev.gpucloud.scheduler.sim.trace.TraceFormatException;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * {@code gpucloud simulate}: replays a trace through the simulator and writes per-run CSV files, a
 * summary CSV, SVG charts and a summary table. Options in {@link #OPTIONS}. Exit status 0, 1 when a file
 * cannot be used or a run fails, 2 on bad usage.
 */
public final class SimulateMain {

    /** The options: name, value label (null for a flag), what it does. Parsed and explained by picocli. */
    private static final String[][] OPTIONS = {
        {"trace", "TRACE", "a trace file, or a name in the traces folder: trace2, trace4, trace2_pr, trace4_pr"
            + " (Muri), philly, multigpu50 (openb pods)"},
        {"cluster", "CLUSTER", "muri (8 hosts x 8 GPUs; default for Muri traces), openb (default for openb pods),"
            + " or a fleet spec CSV (docs/traces.md; Philly's default: docs/results/fleet-philly-spot.csv)"},
        {"policy", "P[,P...]", "jobs: fifo, srtf, srsf, tiresias, fine-las, gittins, production (the scheduler"
            + " service's own queue and placement; the default); openb: random, bestfit, fgd (default all three)"},
        {"las", "SPEC", "jobs: the production queue's least-attained-service settings, 'off' or any of"
            + " first=GPU-S,factor=F,levels=N,min-run=S,starve-factor=F,starve-after=S (default: the service's,"
            + " first=600,factor=2,levels=40,min-run=600,starve-factor=8,starve-after=21600)"},
        {"half", "first|second", "jobs: only the first or the second half of the trace's jobs by submission time"
            + " (ties by job order), to tune on one half and report the other"},
        {"seed", "N", "one seed (default 42)"},
        {"seeds", "A..B", "seeds A to B, or a comma list (openb default 42..51)"},
        {"out", "DIR", "where CSV files and charts go (default sim-results)"},
        {"checkpoint-cost", "S", "seconds a preemption costs to checkpoint (default 0)"},
        {"restore-cost", "S", "seconds a restart costs to restore (default 0)"},
        {"checkpoint-interval", "S", "periodic checkpoint every S seconds of progress (default 0: none)"},
        {"spot-rate", "R", "spot interruptions per spot host-hour (default 0)"},
        {"spot-notice", "S", "seconds of notice before a spot host is reclaimed (default 120)"},
        {"spot-replace", "S", "seconds until a reclaimed spot host is replaced (default 600)"},
        {"compare-on-demand", null, "also run each policy on the same fleet all on demand; report cost saving and"
            + " JCT change"},
        {"arrival", "PCT", "openb: arrival target, % of the cluster's GPU milli (default 130)"},
        {"gpu-share", "PCT", "openb: run a variant of the pod list in which PCT % of the GPU pods share a GPU"
            + " (the FGD paper's GPU-sharing workloads; multigpu50 has 38.6 %); results are named"
            + " <trace>-gpushare<PCT>"},
        {"nodes", "FILE", "openb: node list (default the traces folder's openb node list)"},
        {"traces", "DIR", "the traces folder (default ../shared/traces from the repository)"},
        {"lenient", null, "skip malformed trace rows (default: stop at the first, naming line and column)"},
        {"no-job-csv", null, "no per-job CSV (<trace>-<policy>.jobs.csv.gz); the summary and utilization CSV files"
            + " are always written"},
        {"no-progress", null, "no progress bar on stderr"},
    };

    /** The command line as picocli parses it and prints its help. */
    static CommandLine commandLine() {
        return OptionsTable.commandLine("gpucloud simulate", "Usage: gpucloud simulate --trace TRACE [options]",
                "Replays a GPU-cluster trace through the simulator and writes per-run CSV files, a summary CSV, SVG"
                        + " charts and a summary table. Exit status 0, 1 when a file cannot be used or a run fails, 2 on"
                        + " bad usage. 'gpucloud simulate elastic --help': the elastic fleet against static fleets.",
                OPTIONS);
    }

    /** The seed of the GPU-sharing variants (--gpu-share): one fixed list per share, whatever --seeds says. */
    static final long GPU_SHARE_SEED = 2023;

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> opts = new LinkedHashMap<>();
    private String command;

    SimulateMain(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(new SimulateMain(System.out, System.err).run(args));
    }

    /** Runs the command; returns the exit status. */
    int run(String[] args) {
        if (args.length > 0 && args[0].equals("elastic")) {
            return new dev.gpucloud.scheduler.sim.elastic.ElasticMain(out, err)
                    .run(java.util.Arrays.copyOfRange(args, 1, args.length));
        }
        command = "./gpucloud simulate " + String.join(" ", args);
        try {
            parse(args);
        } catch (UsageException e) {
            err.println("simulate: " + e.getMessage());
            err.print(commandLine().getUsageMessage());
            return 2;
        }
        if (opts.containsKey("help")) {
            out.print(commandLine().getUsageMessage());
            return 0;
        }
        try {
            Path trace = resolveTrace(required("trace"));
            TraceFormat format = TraceFormat.detect(trace);
            Path outDir = Path.of(opts.getOrDefault("out", "sim-results"));
            Files.createDirectories(outDir);
            String name = traceName(trace);
            switch (format) {
                case MURI, PHILLY -> runJobs(trace, format, name, outDir);
                case OPENB_PODS -> runOpenb(trace, name, outDir);
                default -> throw new UsageException(trace.getFileName() + " is an openb node list: pass the pod list as"
                        + " --trace and the node list as --nodes");
            }
            return 0;
        } catch (UsageException e) {
            err.println("simulate: " + e.getMessage());
            return 2;
        } catch (TraceFormatException | IllegalArgumentException | IllegalStateException e) {
            err.println("simulate: " + e.getMessage());
            return 1;
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            err.println("simulate: " + e.getMessage());
            return 1;
        }
    }

    // --- options ---

    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    private void parse(String[] args) {
        ParseResult parsed;
        try {
            parsed = commandLine().parseArgs(args);
        } catch (ParameterException e) {
            throw new UsageException(e.getMessage());
        }
        if (parsed.isUsageHelpRequested()) {
            opts.put("help", "true");
            return;
        }
        if (!parsed.unmatched().isEmpty()) {
            throw new UsageException("unexpected argument '" + parsed.unmatched().get(0) + "'");
        }
        for (OptionSpec o : parsed.matchedOptions()) {
            opts.put(o.longestName().substring(2), o.arity().max() == 0 ? "true" : o.getValue());
        }
        if (!opts.containsKey("trace") && !opts.containsKey("help")) {
            throw new UsageException("--trace is required");
        }
        if (opts.containsKey("seed") && opts.containsKey("seeds")) {
            throw new UsageException("give --seed or --seeds, not both");
        }
    }

    private String required(String key) {
        String v = opts.get(key);
        if (v == null || v.isBlank()) {
            throw new UsageException("--" + key + " is required");
        }
        return v;
    }

    private double number(String key, double dflt, double min) {
        String v = opts.get(key);
        if (v == null) {
            return dflt;
        }
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + key + ": '" + v + "' is not a number");
        }
        if (!(d >= min) || Double.isInfinite(d)) {
            throw new UsageException("--" + key + ": " + v + " must be a finite number >= " + min);
        }
        return d;
    }

    private List<Long> seeds(long dfltFrom, long dfltTo) {
        List<Long> out = new ArrayList<>();
        try {
            if (opts.containsKey("seed")) {
                out.add(Long.parseLong(opts.get("seed")));
            } else if (opts.containsKey("seeds")) {
                String s = opts.get("seeds");
                if (s.contains("..")) {
                    long a = Long.parseLong(s.substring(0, s.indexOf("..")));
                    long b = Long.parseLong(s.substring(s.indexOf("..") + 2));
                    if (b < a || b - a > 10_000) {
                        throw new UsageException("--seeds: " + s + " must be A..B with A <= B, at most 10,000 seeds");
                    }
                    for (long x = a; x <= b; x++) {
                        out.add(x);
                    }
                } else {
                    for (String p : s.split(",")) {
                        out.add(Long.parseLong(p.strip()));
                    }
                }
            } else {
                for (long x = dfltFrom; x <= dfltTo; x++) {
                    out.add(x);
                }
            }
        } catch (NumberFormatException e) {
            throw new UsageException("--seed/--seeds: '" + opts.getOrDefault("seed", opts.get("seeds"))
                    + "' is not a whole number, A..B or a comma list");
        }
        return out;
    }

    private List<String> policies(String dflt, List<String> known) {
        List<String> out = new ArrayList<>();
        for (String p : opts.getOrDefault("policy", dflt).split(",")) {
            String name = p.strip().toLowerCase(Locale.ROOT);
            if (!known.contains(name)) {
                throw new UsageException("--policy: unknown policy '" + p + "' for this trace (known: "
                        + String.join(", ", known) + ")");
            }
            out.add(name);
        }
        return out;
    }

    // --- paths ---

    private Path tracesDir() {
        if (opts.containsKey("traces")) {
            return Path.of(opts.get("traces"));
        }
        String prop = System.getProperty("gpucloud.traces");
        if (prop != null) {
            return Path.of(prop);
        }
        Path root = Path.of(System.getProperty("gpucloud.root", "."));
        Path shared = root.resolve("../shared/traces").normalize();
        return Files.isDirectory(shared) ? shared : Path.of("../shared/traces");
    }

    private Path resolveTrace(String t) {
        Path p = Path.of(t);
        if (Files.exists(p)) {
            return p;
        }
        Path dir = tracesDir();
        Path named = switch (t) {
            case "trace2", "trace4", "trace2_pr", "trace4_pr" -> dir.resolve("muri").resolve(t + ".csv");
            case "philly" -> dir.resolve("philly/philly.csv");
            case "multigpu50" -> dir.resolve("openb/openb_pod_list_multigpu50.csv");
            default -> t.startsWith("openb_pod_list_") ? dir.resolve("openb").resolve(t + ".csv") : null;
        };
        if (named == null) {
            throw new UsageException("--trace: no such file '" + t + "' and not a known trace name (trace2, trace4,"
                    + " trace2_pr, trace4_pr, philly, multigpu50)");
        }
        if (!Files.exists(named)) {
            throw new UsageException("--trace " + t + ": " + named + " does not exist (set --traces DIR)");
        }
        return named;
    }

    static String traceName(Path trace) {
        String f = trace.getFileName().toString();
        f = f.endsWith(".csv") ? f.substring(0, f.length() - 4) : f;
        return f.startsWith("openb_pod_list_") ? f.substring("openb_pod_list_".length()) : f;
    }

    // --- job traces ---

    private void runJobs(Path trace, TraceFormat format, String name, Path outDir) {
        ErrorMode mode = opts.containsKey("lenient") ? ErrorMode.LENIENT : ErrorMode.STRICT;
        Loaded<TraceJob> loaded = format == TraceFormat.MURI ? MuriTraceLoader.load(trace, mode)
                : PhillyTraceLoader.load(trace, mode);
        if (loaded.skippedRows() > 0) {
            err.println("skipped " + loaded.skippedRows() + " malformed rows; first: " + loaded.problems().get(0));
        }
        List<TraceJob> jobs = half(loaded.items());
        if (opts.containsKey("half")) {
            name = name + "-" + opts.get("half") + "-half";
        }
        Las las = las();
        SimCluster cluster = cluster(format);
        List<String> policies = policies("production", Policies.NAMES);
        List<Long> seeds = seeds(42, 42);
        SimConfig base = SimConfig.defaults()
                .withOverheads(ms(number("checkpoint-cost", 0, 0)), ms(number("restore-cost", 0, 0)))
                .withCheckpointInterval(ms(number("checkpoint-interval", 0, 0)))
                .withSpot(number("spot-rate", 0, 0), ms(number("spot-notice", 120, 0)), ms(number("spot-replace", 600, 0)));
        boolean compare = opts.containsKey("compare-on-demand");
        out.printf(Locale.ROOT, "%s: %,d jobs on %s (%d hosts, %d GPUs, %d spot)%n", name, jobs.size(), cluster.name(),
                cluster.hostCount(), cluster.totalGpus(), cluster.spotHosts());
        List<List<String>> rows = new ArrayList<>();
        rows.add(RunReport.row("policy", "seed", "fleet", "jobs", "avg_jct_s", "p99_jct_s", "makespan_s",
                "avg_queueing_s", "utilization", "preemptions", "spot_interruptions", "lost_gpu_h", "fleet_cost_usd",
                "busy_cost_usd", "published_avg_jct_s", "vs_published_pct", "wall_s", "jobs_per_s"));
        List<List<String>> comparisons = new ArrayList<>();
        comparisons.add(RunReport.row("policy", "seed", "cost_spot_usd", "cost_on_demand_usd", "saving_pct",
                "avg_jct_spot_s", "avg_jct_on_demand_s", "jct_change_pct", "lost_gpu_h"));
        SvgChart cdf = new SvgChart(name + ": JCT CDF", "JCT (s, log)", "fraction of jobs").logX().yRange(0, 1)
                .command(command);
        SvgChart util = new SvgChart(name + ": GPU utilization", "time (days)", "allocated GPUs / GPUs").yRange(0, 1)
                .command(command);
        List<String> costLabels = new ArrayList<>();
        List<Double> costValues = new ArrayList<>();
        for (String p : policies) {
            for (long seed : seeds) {
                SimConfig cfg = base.withSeed(seed);
                String tag = name + "-" + p + (seeds.size() > 1 ? "-s" + seed : "");
                SimResult r = runOne(jobs, cluster, policy(p, las), cfg, tag);
                write(outDir, tag, r);
                rows.add(summaryRow(name, p, seed, cluster.spotHosts() > 0 ? "as-spec" : "on-demand", r));
                if (seed == seeds.get(0)) {
                    double[][] c = RunReport.jctCdf(r);
                    cdf.add(p, c[0], c[1]);
                    double[] u = r.utilizationSeries();
                    double[] x = new double[u.length];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = i * r.bucketMillis() / 86_400_000.0;
                    }
                    util.add(p, x, smooth(u, 24));
                }
                if (compare) {
                    SimResult od = runOne(jobs, cluster.allOnDemand(), policy(p, las),
                            cfg.withSpot(0, 0, 0), tag + "-ondemand");
                    write(outDir, tag + "-ondemand", od);
                    rows.add(summaryRow(name, p, seed, "all-on-demand", od));
                    comparisons.add(RunReport.row(p, Long.toString(seed), RunReport.num(r.fleetCostMicros() / 1e6, 0),
                            RunReport.num(od.fleetCostMicros() / 1e6, 0),
                            RunReport.num(100 * (1 - r.fleetCostMicros() / od.fleetCostMicros()), 1),
                            RunReport.num(r.averageJctSeconds(), 0), RunReport.num(od.averageJctSeconds(), 0),
                            RunReport.num(100 * (r.averageJctSeconds() / od.averageJctSeconds() - 1), 1),
                            RunReport.num(r.lostGpuHours(), 1)));
                    if (seed == seeds.get(0)) {
                        costLabels.add(p + " on-demand");
                        costValues.add(od.fleetCostMicros() / 1e6);
                        costLabels.add(p + " spot");
                        costValues.add(r.fleetCostMicros() / 1e6);
                    }
                }
            }
        }
        RunReport.writeTable(outDir.resolve(name + "-summary.csv"), rows);
        cdf.write(outDir.resolve(name + "-jct-cdf.svg"));
        util.write(outDir.resolve(name + "-utilization.svg"));
        out.println();
        out.print(RunReport.table(shortRows(rows)));
        if (compare) {
            RunReport.writeTable(outDir.resolve(name + "-spot-vs-on-demand.csv"), comparisons);
            double[] v = costValues.stream().mapToDouble(Double::doubleValue).toArray();
            writeText(outDir.resolve(name + "-cost.svg"), SvgChart.bars(name + ": fleet cost over the makespan",
                    "USD", costLabels, v, command));
            out.println();
            out.print(RunReport.table(comparisons));
        }
        out.println();
        out.println("wrote " + outDir.resolve(name + "-summary.csv") + ", per-run CSV files and charts in " + outDir);
    }

    private static Policy policy(String name, Las las) {
        return name.equalsIgnoreCase("production") ? new Production(las) : Policies.byName(name);
    }

    /** The jobs of the half --half names, by submission time then trace order; all of them without it. */
    private List<TraceJob> half(List<TraceJob> all) {
        String h = opts.get("half");
        if (h == null) {
            return all;
        }
        if (!h.equals("first") && !h.equals("second")) {
            throw new UsageException("--half: '" + h + "' is neither first nor second");
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            order.add(i);
        }
        order.sort(java.util.Comparator.<Integer>comparingLong(i -> all.get(i).submitMillis()).thenComparingInt(i -> i));
        int cut = all.size() / 2;
        List<Integer> picked = h.equals("first") ? order.subList(0, cut) : order.subList(cut, order.size());
        return picked.stream().sorted().map(all::get).toList();
    }

    /** The production queue's LAS settings from --las: the service's defaults, changed where it says. */
    private Las las() {
        String spec = opts.get("las");
        if (spec == null) {
            return Las.DEFAULT;
        }
        if (spec.equals("off")) {
            return Las.OFF;
        }
        Las d = Las.DEFAULT;
        double first = d.firstLimitGpuSeconds();
        double factor = d.factor();
        int levels = d.levels();
        long minRun = d.minRunMillis();
        double starveFactor = d.starveFactor();
        long starveAfter = d.starveAfterMillis();
        for (String part : spec.split(",")) {
            String[] kv = part.split("=", 2);
            double v;
            try {
                v = kv.length == 2 ? Double.parseDouble(kv[1].trim()) : Double.NaN;
            } catch (NumberFormatException e) {
                v = Double.NaN;
            }
            if (!Double.isFinite(v)) {
                throw new UsageException("--las: '" + part + "' is not KEY=NUMBER");
            }
            switch (kv[0].trim()) {
                case "first" -> first = v;
                case "factor" -> factor = v;
                case "levels" -> levels = (int) v;
                case "min-run" -> minRun = (long) (v * 1000);
                case "starve-factor" -> starveFactor = v;
                case "starve-after" -> starveAfter = (long) (v * 1000);
                default -> throw new UsageException("--las: unknown key '" + kv[0].trim() + "' (known: first, factor,"
                        + " levels, min-run, starve-factor, starve-after)");
            }
        }
        try {
            return new Las(first, factor, levels, minRun, starveFactor, starveAfter);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--las: " + e.getMessage());
        }
    }

    private SimCluster cluster(TraceFormat format) {
        String c = opts.get("cluster");
        if (c == null) {
            if (format == TraceFormat.MURI) {
                c = "muri";
            } else {
                Path dflt = Path.of(System.getProperty("gpucloud.root", ".")).resolve("docs/results/fleet-philly-spot.csv");
                if (!Files.exists(dflt)) {
                    throw new UsageException("--cluster is required for the Philly list (a fleet spec CSV)");
                }
                c = dflt.toString();
            }
        }
        if (c.equals("muri")) {
            return SimCluster.of(MuriCluster.build(), h -> 0);
        }
        if (c.equals("openb")) {
            throw new UsageException("--cluster openb is for openb pod lists; job traces run on muri or a fleet spec");
        }
        Path p = Path.of(c);
        if (!Files.exists(p)) {
            throw new UsageException("--cluster: '" + c + "' is neither muri nor an existing fleet spec file");
        }
        FleetSpec spec = FleetSpec.load(p);
        ClusterModel model = spec.build();
        return SimCluster.of(model, h -> spec.hostType(h.instanceType()).orElseThrow().priceMicrosPerHour());
    }

    private SimResult runOne(List<TraceJob> jobs, SimCluster cluster, Policy policy, SimConfig cfg, String tag) {
        ProgressBar bar = opts.containsKey("no-progress") ? null : new ProgressBar(err, tag);
        SimResult r = new Simulator(jobs, cluster, policy, cfg).run(bar == null ? null : bar::update, 512);
        if (bar != null) {
            bar.finish();
        }
        return r;
    }

    private void write(Path outDir, String tag, SimResult r) {
        if (!opts.containsKey("no-job-csv")) {
            RunReport.writeJobs(outDir.resolve(tag + ".jobs.csv.gz"), r);
        }
        RunReport.writeUtilization(outDir.resolve(tag + ".utilization.csv"), r);
    }

    private static List<String> summaryRow(String trace, String policy, long seed, String fleet, SimResult r) {
        PublishedFigures.Muri pub = PublishedFigures.MURI.get(trace + "/" + policy);
        return RunReport.row(policy, Long.toString(seed), fleet, Integer.toString(r.jobs().size()),
                RunReport.num(r.averageJctSeconds(), 0), RunReport.num(r.p99JctSeconds(), 0),
                RunReport.num(r.makespanSeconds(), 0), RunReport.num(r.averageQueueingSeconds(), 0),
                RunReport.num(r.utilization(), 3), Long.toString(r.preemptions()), Long.toString(r.spotInterruptions()),
                RunReport.num(r.lostGpuHours(), 1), RunReport.num(r.fleetCostMicros() / 1e6, 0),
                RunReport.num(r.busyCostMicros() / 1e6, 0), pub == null ? "-" : RunReport.num(pub.avgJct(), 0),
                pub == null ? "-" : RunReport.num(100 * (r.averageJctSeconds() / pub.avgJct() - 1), 1),
                RunReport.num(r.wallNanos() / 1e9, 1), RunReport.num(r.jobsPerWallSecond(), 0));
    }

    /** The summary without the cost columns when nothing costs anything. */
    private static List<List<String>> shortRows(List<List<String>> rows) {
        boolean costs = rows.stream().skip(1).anyMatch(r -> !r.get(12).equals("0"));
        if (costs) {
            return rows;
        }
        List<List<String>> out = new ArrayList<>();
        for (List<String> r : rows) {
            List<String> c = new ArrayList<>(r);
            c.remove(13);
            c.remove(12);
            out.add(c);
        }
        return out;
    }

    /** Moving average over {@code w} buckets, for a readable utilization line. */
    static double[] smooth(double[] u, int w) {
        double[] out = new double[u.length];
        double sum = 0;
        for (int i = 0; i < u.length; i++) {
            sum += u[i];
            if (i >= w) {
                sum -= u[i - w];
            }
            out[i] = sum / Math.min(i + 1, w);
        }
        return out;
    }

    private static long ms(double seconds) {
        return Math.round(seconds * 1000);
    }

    private static void writeText(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot write " + file, e);
        }
    }

    // --- openb ---

    private void runOpenb(Path podsFile, String name, Path outDir) {
        ErrorMode mode = opts.containsKey("lenient") ? ErrorMode.LENIENT : ErrorMode.STRICT;
        String c = opts.getOrDefault("cluster", "openb");
        if (!c.equals("openb")) {
            throw new UsageException("--cluster: openb pod lists run on the openb cluster (--nodes FILE to change it)");
        }
        Path nodesFile = opts.containsKey("nodes") ? Path.of(opts.get("nodes"))
                : tracesDir().resolve("openb/openb_node_list_gpu_node.csv");
        List<OpenbNode> nodes = OpenbLoader.loadNodes(nodesFile, mode).items();
        List<OpenbPod> pods = OpenbLoader.loadPods(podsFile, mode).items();
        if (opts.containsKey("gpu-share")) {
            double share = number("gpu-share", 0, 0);
            if (share > 100 || share != Math.rint(share)) {
                throw new UsageException("--gpu-share: " + opts.get("gpu-share") + " must be a whole percentage 0..100");
            }
            pods = GpuShareVariant.of(pods, (int) share, GPU_SHARE_SEED);
            name = name + "-gpushare" + (int) share;
        }
        double arrival = number("arrival", 130, 1);
        int at = (int) Math.round(arrival);
        List<String> policies = policies("random,bestfit,fgd", OpenbExperiment.POLICIES);
        List<Long> seeds = seeds(42, 51);
        out.printf(Locale.ROOT, "%s: %,d pods on %,d openb nodes; arrival tuned to %.0f%% of GPU milli; seeds %s%n",
                name, pods.size(), nodes.size(), arrival, seeds.size() == 1 ? seeds.get(0)
                        : seeds.get(0) + ".." + seeds.get(seeds.size() - 1));
        List<List<String>> rows = new ArrayList<>();
        rows.add(RunReport.row("policy", "seed", "pods", "failed", "alloc_at_100_pct", "alloc_at_" + at + "_pct",
                "cpu_at_" + at + "_pct", "mem_at_" + at + "_pct", "published_at_" + at + "_pct", "wall_s"));
        List<List<String>> means = new ArrayList<>();
        means.add(RunReport.row("policy", "seeds", "alloc_at_100_pct", "alloc_at_" + at + "_pct", "cpu_at_" + at + "_pct",
                "mem_at_" + at + "_pct", "published_at_100", "published_at_" + at));
        SvgChart chart = new SvgChart(name + ": GPU allocation (mean of " + seeds.size() + " seeds)",
                "arrived GPU milli, % of the cluster", "allocated GPU milli, % of the cluster").yRange(0, 100)
                .command(command);
        for (String p : policies) {
            List<OpenbExperiment.Result> runs = new ArrayList<>();
            for (long seed : seeds) {
                long t0 = System.nanoTime();
                OpenbExperiment.Result r = OpenbExperiment.run(nodes, pods, p, seed, arrival / 100);
                double wall = (System.nanoTime() - t0) / 1e9;
                runs.add(r);
                if (!opts.containsKey("no-progress")) {
                    err.printf(Locale.ROOT, "  %s seed %d: %.2f%% allocated at %d%% arrival (%.1f s)%n", p, seed,
                            r.allocatedPercentAt(at), at, wall);
                }
                Double pub = at == 130 ? PublishedFigures.OPENB_130.get(p) : at == 100 ? PublishedFigures.OPENB_100.get(p) : null;
                rows.add(RunReport.row(p, Long.toString(seed), Integer.toString(r.attempted()), Integer.toString(r.failed()),
                        RunReport.num(r.allocatedPercentAt(100), 2), RunReport.num(r.allocatedPercentAt(at), 2),
                        RunReport.num(r.cpuAt()[Math.min(at, r.cpuAt().length - 1)], 2),
                        RunReport.num(r.memoryAt()[Math.min(at, r.memoryAt().length - 1)], 2),
                        pub == null || !name.equals("multigpu50") ? "-" : RunReport.num(pub, 2),
                        RunReport.num(wall, 1)));
            }
            boolean published = name.equals("multigpu50");
            Double p100 = PublishedFigures.OPENB_100.get(p);
            Double pAt = at == 130 ? PublishedFigures.OPENB_130.get(p) : at == 100 ? p100 : null;
            means.add(RunReport.row(p, Integer.toString(runs.size()),
                    RunReport.num(OpenbExperiment.mean(runs, r -> r.allocatedPercentAt(100)), 2),
                    RunReport.num(OpenbExperiment.mean(runs, r -> r.allocatedPercentAt(at)), 2),
                    RunReport.num(OpenbExperiment.mean(runs, r -> r.cpuAt()[Math.min(at, r.cpuAt().length - 1)]), 2),
                    RunReport.num(OpenbExperiment.mean(runs, r -> r.memoryAt()[Math.min(at, r.memoryAt().length - 1)]), 2),
                    published && p100 != null ? RunReport.num(p100, 2) : "-",
                    published && pAt != null ? RunReport.num(pAt, 2) : "-"));
            int size = runs.get(0).allocatedAt().length;
            double[] x = new double[size];
            double[] y = new double[size];
            for (int i = 0; i < size; i++) {
                final int k = i;
                x[i] = i;
                y[i] = OpenbExperiment.mean(runs, r -> r.allocatedPercentAt(k));
            }
            chart.add(p, x, y);
        }
        RunReport.writeTable(outDir.resolve(name + "-openb-runs.csv"), rows);
        RunReport.writeTable(outDir.resolve(name + "-openb-summary.csv"), means);
        chart.write(outDir.resolve(name + "-allocation.svg"));
        out.println();
        out.print(RunReport.table(means));
        out.println();
        out.println("wrote " + outDir.resolve(name + "-openb-summary.csv") + ", per-seed rows and the chart in " + outDir);
    }

    /** A one-line progress bar on stderr, redrawn at most every 200 ms. */
    static final class ProgressBar {
        private final PrintStream err;
        private final String tag;
        private final long started = System.nanoTime();
        private long lastDraw;

        ProgressBar(PrintStream err, String tag) {
            this.err = err;
            this.tag = tag;
        }

        void update(int done, int total, long nowMillis) {
            long t = System.nanoTime();
            if (t - lastDraw < 200_000_000L && done < total) {
                return;
            }
            lastDraw = t;
            double f = total == 0 ? 1 : done / (double) total;
            int filled = (int) Math.round(f * 30);
            err.printf(Locale.ROOT, "\r%-24s [%s%s] %5.1f%% %,d/%,d jobs, day %.1f, %.0f s", tag, "#".repeat(filled),
                    ".".repeat(30 - filled), 100 * f, done, total, nowMillis / 86_400_000.0, (t - started) / 1e9);
        }

        void finish() {
            err.println();
        }
    }
}
