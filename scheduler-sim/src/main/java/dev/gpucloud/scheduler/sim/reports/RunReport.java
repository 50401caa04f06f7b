package dev.gpucloud.scheduler.sim.reports;

import dev.gpucloud.scheduler.sim.engine.SimJob;
import dev.gpucloud.scheduler.sim.engine.SimResult;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** CSV files of a run (one row per job; utilization per bucket) and text tables for the terminal. */
public final class RunReport {

    private RunReport() {
    }

    /** One row per job, in trace order. Times in seconds. A file name ending in .gz is gzip-compressed. */
    public static void writeJobs(Path file, SimResult r) {
        write(file, w -> {
            w.write("job_id,submit_s,gpus,duration_s,first_start_s,finish_s,jct_s,queueing_s,preemptions,"
                    + "spot_interruptions,lost_gpu_s,overhead_gpu_s\n");
            for (SimJob j : r.jobs()) {
                w.write(String.format(Locale.ROOT, "%s,%.3f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%d,%.3f,%.3f%n",
                        csv(j.id()), j.submitMillis() / 1e3, j.gpus(), j.durationMillis() / 1e3,
                        j.firstStartMillis() / 1e3, j.finishMillis() / 1e3,
                        (j.finishMillis() - j.submitMillis()) / 1e3, (j.firstStartMillis() - j.submitMillis()) / 1e3,
                        j.preemptions(), j.interruptions(), j.lostGpuMillis() / 1e3, j.overheadGpuMillis() / 1e3));
            }
        });
    }

    /** At most this many rows in a utilization CSV: longer runs merge consecutive buckets. */
    public static final int MAX_UTILIZATION_ROWS = 2_000;

    /**
     * Utilization (allocated GPUs / GPUs) over time: start of each period in hours, its length in hours,
     * mean utilization 0..1. Periods are the run's buckets (an hour by default), merged so that a long
     * run has at most {@value #MAX_UTILIZATION_ROWS} rows.
     */
    public static void writeUtilization(Path file, SimResult r) {
        double[] u = r.utilizationSeries();
        int k = Math.max(1, (u.length + MAX_UTILIZATION_ROWS - 1) / MAX_UTILIZATION_ROWS);
        double hours = r.bucketMillis() / 3.6e6;
        write(file, w -> {
            w.write("hour_start,hours,utilization\n");
            for (int i = 0; i < u.length; i += k) {
                int n = Math.min(k, u.length - i);
                double sum = 0;
                for (int j = i; j < i + n; j++) {
                    sum += u[j];
                }
                w.write(String.format(Locale.ROOT, "%.3f,%.3f,%.5f%n", i * hours, n * hours, sum / n));
            }
        });
    }

    /** Rows of a table, first row the header; written as CSV. */
    public static void writeTable(Path file, List<List<String>> rows) {
        write(file, w -> {
            for (List<String> row : rows) {
                w.write(String.join(",", row.stream().map(RunReport::csv).toList()));
                w.write('\n');
            }
        });
    }

    /** A fixed-width text table of rows (first row the header); numbers right-aligned. */
    public static String table(List<List<String>> rows) {
        int cols = rows.get(0).size();
        int[] width = new int[cols];
        for (List<String> row : rows) {
            for (int c = 0; c < cols; c++) {
                width[c] = Math.max(width[c], row.get(c).length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            List<String> row = rows.get(r);
            for (int c = 0; c < cols; c++) {
                String v = row.get(c);
                boolean left = c == 0;
                String pad = " ".repeat(width[c] - v.length());
                b.append(left ? v + pad : pad + v).append(c + 1 < cols ? "  " : "\n");
            }
            if (r == 0) {
                int total = Arrays.stream(width).sum() + 2 * (cols - 1);
                b.append("-".repeat(total)).append('\n');
            }
        }
        return b.toString();
    }

    /** JCT CDF points (sorted JCT seconds, fraction of jobs at or below). */
    public static double[][] jctCdf(SimResult r) {
        double[] s = r.jctSeconds();
        Arrays.sort(s);
        double[] y = new double[s.length];
        for (int i = 0; i < s.length; i++) {
            y[i] = (i + 1) / (double) s.length;
        }
        return new double[][] {s, y};
    }

    public static String num(double v, int decimals) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", v);
    }

    static String csv(String s) {
        return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    interface Body {
        void write(BufferedWriter w) throws IOException;
    }

    static void write(Path file, Body body) {
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            java.io.OutputStream os = Files.newOutputStream(file);
            if (file.getFileName().toString().endsWith(".gz")) {
                os = new java.util.zip.GZIPOutputStream(os, 1 << 16);
            }
            try (BufferedWriter w = new BufferedWriter(new java.io.OutputStreamWriter(os, StandardCharsets.UTF_8), 1 << 16)) {
                body.write(w);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** A new list of the given cells. */
    public static List<String> row(String... cells) {
        return new ArrayList<>(List.of(cells));
    }
}
