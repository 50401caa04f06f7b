package dev.gpucloud.scheduler.sim.trace;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a Muri trace ({@code job_id, num_gpu, submit_time, iterations, model_name, batch_size,
 * duration, interval, iteration_time, resource_time_0..2, priority}). All times in the file are
 * milliseconds and are kept as such in {@link TraceJob} (whole milliseconds; the per-resource
 * times may have a fraction, e.g. 0.5 ms); submit times are taken from the earliest
 * submission (0 in the published files). A job's id is its {@code job_id}, which must be unique;
 * jobs come back ordered by submit time, then file order.
 */
public final class MuriTraceLoader {

    public static final List<String> COLUMNS = List.of("job_id", "num_gpu", "submit_time", "iterations", "model_name",
            "batch_size", "duration", "interval", "iteration_time", "resource_time_0", "resource_time_1",
            "resource_time_2", "priority");

    private MuriTraceLoader() {
    }

    /** Loads the whole trace, stopping at the first malformed row. */
    public static Loaded<TraceJob> load(Path path) {
        return load(path, ErrorMode.STRICT);
    }

    public static Loaded<TraceJob> load(Path path, ErrorMode mode) {
        List<TraceJob> jobs = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        Loaded<Void> read = CsvFile.read(path, COLUMNS, false, mode, row -> {
            TraceJob job = parse(row);
            Integer earlier = seen.putIfAbsent(job.id(), row.line());
            if (earlier != null) {
                throw row.error("job_id", "'" + job.id() + "' repeats the job of line " + earlier);
            }
            return job;
        }, jobs::add);
        long origin = jobs.stream().mapToLong(TraceJob::submitMillis).min().orElse(0);
        List<TraceJob> shifted = new ArrayList<>(jobs.size());
        for (TraceJob job : jobs) {
            shifted.add(new TraceJob(job.id(), job.submitMillis() - origin, job.durationMillis(), job.gpus(),
                    job.tenant(), job.training()));
        }
        shifted.sort(Comparator.comparingLong(TraceJob::submitMillis));
        return read.withItems(shifted);
    }

    private static TraceJob parse(CsvRow row) {
        String id = row.text("job_id");
        int gpus = row.intValue("num_gpu", 1, 1_000_000);
        long submit = row.longValue("submit_time", 0, Long.MAX_VALUE);
        long duration = row.longValue("duration", 1, Long.MAX_VALUE);
        TrainingProfile training = new TrainingProfile(
                row.text("model_name"),
                row.intValue("batch_size", 0, Integer.MAX_VALUE),
                row.longValue("iterations", 0, Long.MAX_VALUE),
                row.longValue("iteration_time", 0, Long.MAX_VALUE),
                row.longValue("interval", 0, Long.MAX_VALUE),
                List.of(millis(row, "resource_time_0"), millis(row, "resource_time_1"), millis(row, "resource_time_2")),
                row.intValue("priority", Integer.MIN_VALUE, Integer.MAX_VALUE));
        return new TraceJob(id, submit, duration, gpus, TraceJob.NO_TENANT, training);
    }

    /** A non-negative time in milliseconds that may have a fraction (the resource_time columns: "0.5"). */
    private static double millis(CsvRow row, String column) {
        BigDecimal value = row.decimal(column);
        if (value.signum() < 0) {
            throw row.error(column, "'" + row.raw(column) + "' is out of range (must be at least 0)");
        }
        return value.doubleValue();
    }
}
