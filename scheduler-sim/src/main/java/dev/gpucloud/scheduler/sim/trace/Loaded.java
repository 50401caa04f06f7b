package dev.gpucloud.scheduler.sim.trace;

import java.util.List;

/**
 * What a loader read from one file: the records in the order the loader documents, and, in
 * {@link ErrorMode#LENIENT} mode, how many rows it skipped with the first messages saying why.
 */
public record Loaded<T>(String file, List<T> items, int skippedRows, List<String> problems) {

    /** At most this many skipped-row messages are kept; {@link #skippedRows()} counts them all. */
    public static final int MAX_PROBLEMS = 20;

    public Loaded {
        if (file == null || file.isBlank()) {
            throw new IllegalArgumentException("a load result names its file");
        }
        if (skippedRows < 0) {
            throw new IllegalArgumentException("skippedRows must be >= 0, was " + skippedRows);
        }
        items = List.copyOf(items);
        problems = List.copyOf(problems);
    }

    public int size() {
        return items.size();
    }

    /** The same counts with other items, for a loader that transforms what it read. */
    public <U> Loaded<U> withItems(List<U> other) {
        return new Loaded<>(file, other, skippedRows, problems);
    }
}
