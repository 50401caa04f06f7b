package dev.gpucloud.scheduler.sim.trace;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads the Philly job list (columns {@code timestamp, duration, num_gpus, gpu_time, cluster}). The
 * timestamp is local wall-clock time without a zone ("2017-10-09 07:01:55"); submit times are taken
 * as plain differences of those wall-clock times (no daylight-saving shift), from the earliest
 * submission in the file, which need not be its first row. Durations are seconds (decimals allowed,
 * kept to the millisecond); {@code gpu_time} must equal duration x num_gpus. A job's id is the line
 * number of its row in the file (the first job, after the header, is "2"), so it stays the same when
 * lenient loading skips rows; jobs come back ordered by submit time, then line.
 */
public final class PhillyTraceLoader {

    public static final List<String> COLUMNS = List.of("timestamp", "duration", "num_gpus", "gpu_time", "cluster");
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss");
    /** gpu_time may differ from duration x num_gpus by rounding only. */
    private static final BigDecimal GPU_TIME_TOLERANCE = new BigDecimal("0.5");

    private PhillyTraceLoader() {
    }

    /** Loads the whole list, stopping at the first malformed row. */
    public static Loaded<TraceJob> load(Path path) {
        return load(path, ErrorMode.STRICT);
    }

    public static Loaded<TraceJob> load(Path path, ErrorMode mode) {
        List<Row> rows = new ArrayList<>();
        Loaded<Void> read = CsvFile.read(path, COLUMNS, false, mode, PhillyTraceLoader::parse, rows::add);
        LocalDateTime origin = rows.stream().map(Row::submittedAt).min(Comparator.naturalOrder()).orElse(null);
        List<TraceJob> jobs = new ArrayList<>(rows.size());
        for (Row row : rows) {
            long submit = Duration.between(origin, row.submittedAt()).toMillis();
            jobs.add(TraceJob.of(Integer.toString(row.line()), submit, row.durationMillis(), row.gpus(), row.cluster()));
        }
        jobs.sort(Comparator.comparingLong(TraceJob::submitMillis).thenComparingInt(j -> Integer.parseInt(j.id())));
        return read.withItems(jobs);
    }

    private static Row parse(CsvRow row) {
        String stamp = row.text("timestamp");
        LocalDateTime at;
        try {
            at = LocalDateTime.parse(stamp, TIMESTAMP);
        } catch (DateTimeParseException e) {
            throw row.error("timestamp", "'" + CsvRow.clip(stamp) + "' is not a time like 2017-10-09 07:01:55");
        }
        long durationMillis = row.scaled("duration", 3, 1, Long.MAX_VALUE / 1_000);
        int gpus = row.intValue("num_gpus", 1, 1_000_000);
        BigDecimal gpuTime = row.decimal("gpu_time");
        BigDecimal expected = row.decimal("duration").multiply(BigDecimal.valueOf(gpus));
        if (gpuTime.subtract(expected).abs().compareTo(GPU_TIME_TOLERANCE) > 0) {
            throw row.error("gpu_time", "'" + row.raw("gpu_time") + "' is not duration x num_gpus ("
                    + expected.stripTrailingZeros().toPlainString() + ")");
        }
        return new Row(row.line(), at, durationMillis, gpus, row.text("cluster"));
    }

    private record Row(int line, LocalDateTime submittedAt, long durationMillis, int gpus, String cluster) {
    }
}
