package dev.gpucloud.scheduler.packing;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mix of task shapes a cluster expects (FGD's "target workload"): shapes with weights summing to
 * 1. {@link #of(Collection, double)} builds it from observed tasks: the most common shapes, most
 * frequent first, until they cover {@code coverage} of the tasks, with weights renormalised.
 */
public record Distribution(List<Entry> entries) {

    /** One shape and its probability. */
    public record Entry(TaskShape shape, double weight) {
        public Entry {
            if (shape == null || !(weight > 0) || weight > 1.0000001) {
                throw new IllegalArgumentException("an entry needs a shape and a weight in (0, 1], was " + weight);
            }
        }
    }

    public Distribution {
        if (entries == null || entries.isEmpty()) {
            throw new IllegalArgumentException("a distribution needs at least one shape");
        }
        entries = List.copyOf(entries);
        double sum = entries.stream().mapToDouble(Entry::weight).sum();
        if (Math.abs(sum - 1) > 1e-6) {
            throw new IllegalArgumentException("weights must sum to 1, sum to " + sum);
        }
    }

    /** A single shape with weight 1. */
    public static Distribution single(TaskShape shape) {
        return new Distribution(List.of(new Entry(shape, 1)));
    }

    /**
     * The most common shapes of {@code tasks} covering at least {@code coverage} (0..1] of them; ties in
     * frequency keep first-seen order. Weights are each shape's count over the count of the kept shapes.
     */
    public static Distribution of(Collection<TaskShape> tasks, double coverage) {
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("no tasks to build a distribution from");
        }
        if (!(coverage > 0) || coverage > 1) {
            throw new IllegalArgumentException("coverage must be within (0, 1], was " + coverage);
        }
        Map<TaskShape, Integer> counts = new LinkedHashMap<>();
        for (TaskShape t : tasks) {
            counts.merge(t, 1, Integer::sum);
        }
        List<Map.Entry<TaskShape, Integer>> sorted = new ArrayList<>(counts.entrySet());
        sorted.sort(Comparator.comparing(Map.Entry<TaskShape, Integer>::getValue).reversed());
        List<Map.Entry<TaskShape, Integer>> kept = new ArrayList<>();
        long covered = 0;
        for (Map.Entry<TaskShape, Integer> e : sorted) {
            kept.add(e);
            covered += e.getValue();
            if (covered >= coverage * tasks.size() - 1e-9) {
                break;
            }
        }
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<TaskShape, Integer> e : kept) {
            entries.add(new Entry(e.getKey(), e.getValue() / (double) covered));
        }
        return new Distribution(entries);
    }

    public int size() {
        return entries.size();
    }
}
