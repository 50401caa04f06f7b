package dev.gpucloud.scheduler.sim.trace;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Loads trace files and prints what is in them, proving the loaders on the real files:
 * {@code java -cp ... dev.gpucloud.scheduler.sim.trace.TraceSummary [--lenient] FILE...}. The format
 * is recognised from each file's header. Exit status 1 if a file cannot be loaded, 2 on bad usage.
 */
public final class TraceSummary {

    private TraceSummary() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Summarises each file in turn; returns the process exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        ErrorMode mode = ErrorMode.STRICT;
        List<String> files = Arrays.stream(args).filter(a -> !a.equals("--lenient")).toList();
        if (files.size() < args.length) {
            mode = ErrorMode.LENIENT;
        }
        if (files.isEmpty()) {
            err.println("usage: TraceSummary [--lenient] TRACE.csv...  (Philly, Muri, openb node or pod lists)");
            return 2;
        }
        int status = 0;
        for (String file : files) {
            try {
                summarize(Path.of(file), mode, out);
            } catch (TraceFormatException e) {
                err.println("error: " + e.getMessage());
                status = 1;
            }
        }
        return status;
    }

    /** Prints the summary of one file of any known format. */
    public static void summarize(Path path, ErrorMode mode, PrintStream out) {
        TraceFormat format = TraceFormat.detect(path);
        out.println("== " + path + " (" + format.name().toLowerCase(Locale.ROOT).replace('_', ' ') + ")");
        Loaded<?> loaded = switch (format) {
            case PHILLY -> jobs(PhillyTraceLoader.load(path, mode), out);
            case MURI -> jobs(MuriTraceLoader.load(path, mode), out);
            case OPENB_NODES -> nodes(OpenbLoader.loadNodes(path, mode), out);
            case OPENB_PODS -> pods(OpenbLoader.loadPods(path, mode), out);
        };
        if (loaded.skippedRows() > 0) {
            out.println("skipped rows: " + loaded.skippedRows() + " (first: " + loaded.problems().get(0) + ")");
        }
        out.println();
    }

    private static Loaded<TraceJob> jobs(Loaded<TraceJob> loaded, PrintStream out) {
        List<TraceJob> jobs = loaded.items();
        out.println("jobs: " + count(jobs.size()));
        if (jobs.isEmpty()) {
            return loaded;
        }
        out.println("GPUs per job: " + histogram(jobs, TraceJob::gpus));
        long[] durations = jobs.stream().mapToLong(TraceJob::durationMillis).sorted().toArray();
        out.println("duration (s): min " + seconds(durations[0])
                + ", p50 " + seconds(percentile(durations, 0.50))
                + ", p90 " + seconds(percentile(durations, 0.90))
                + ", p99 " + seconds(percentile(durations, 0.99))
                + ", max " + seconds(durations[durations.length - 1])
                + ", mean " + String.format(Locale.ROOT, "%,.1f", Arrays.stream(durations).average().orElse(0) / 1000));
        long first = jobs.stream().mapToLong(TraceJob::submitMillis).min().orElse(0);
        long last = jobs.stream().mapToLong(TraceJob::submitMillis).max().orElse(0);
        out.println("submissions: " + seconds(first) + " s .. " + seconds(last) + " s after the first ("
                + String.format(Locale.ROOT, "%.1f", (last - first) / 86_400_000.0) + " days)");
        double gpuHours = jobs.stream().mapToDouble(TraceJob::gpuSeconds).sum() / 3600;
        out.println("GPU-hours: " + String.format(Locale.ROOT, "%,.0f", gpuHours));
        long tenants = jobs.stream().map(TraceJob::tenant).distinct().count();
        out.println("tenants: " + tenants);
        if (jobs.get(0).hasTraining()) {
            out.println("models: " + histogram(jobs, j -> j.training().modelName()));
        }
        return loaded;
    }

    private static Loaded<OpenbNode> nodes(Loaded<OpenbNode> loaded, PrintStream out) {
        List<OpenbNode> nodes = loaded.items();
        out.println("hosts: " + count(nodes.size()) + ", GPUs: " + count(nodes.stream().mapToLong(OpenbNode::gpus).sum())
                + ", CPU cores: " + count(nodes.stream().mapToLong(OpenbNode::cpuMilli).sum() / 1000)
                + ", memory GiB: " + count(nodes.stream().mapToLong(OpenbNode::memoryMib).sum() / 1024));
        Map<String, Long> gpusByModel = nodes.stream().collect(Collectors.groupingBy(OpenbNode::model, TreeMap::new,
                Collectors.summingLong(OpenbNode::gpus)));
        out.println("GPUs by model: " + gpusByModel.entrySet().stream().map(e -> e.getKey() + ": " + count(e.getValue()))
                .collect(Collectors.joining(", ")));
        out.println("hosts by model: " + histogram(nodes, OpenbNode::model));
        out.println("GPUs per host: " + histogram(nodes, OpenbNode::gpus));
        return loaded;
    }

    private static Loaded<OpenbPod> pods(Loaded<OpenbPod> loaded, PrintStream out) {
        List<OpenbPod> pods = loaded.items();
        out.println("pods: " + count(pods.size()));
        out.println("GPUs per pod (num_gpu): " + histogram(pods, OpenbPod::numGpu));
        out.println("GPU shares (num_gpu 1, gpu_milli < 1000): " + count(pods.stream().filter(OpenbPod::isShare).count()));
        long milli = pods.stream().mapToLong(OpenbPod::totalGpuMilli).sum();
        out.println("GPU milli requested: " + count(milli));
        return loaded;
    }

    /** The value at index floor(n x q) of the sorted values, the convention of the Muri figures. */
    static long percentile(long[] sorted, double q) {
        int index = (int) Math.min(sorted.length - 1, Math.floor(sorted.length * q));
        return sorted[index];
    }

    private static <T, K extends Comparable<K>> String histogram(List<T> items, Function<T, K> key) {
        Map<K, Long> counts = items.stream().collect(Collectors.groupingBy(key, TreeMap::new, Collectors.counting()));
        return counts.entrySet().stream().map(e -> e.getKey() + ": " + count(e.getValue()))
                .collect(Collectors.joining(", "));
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    private static String seconds(long millis) {
        return millis % 1000 == 0 ? count(millis / 1000) : String.format(Locale.ROOT, "%,.3f", millis / 1000.0);
    }
}
