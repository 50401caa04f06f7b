package dev.gpucloud.scheduler.packing;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@link FragmentationScorer} for one distribution, remembering the fragmentation of node states it has
 * seen (keyed by content: model, free CPU, free memory and the multiset of free GPU milli, not by node
 * id), so that many identical nodes cost one computation. Same answers as the pure functions. Not
 * thread-safe; the memo is cleared when it holds {@value #MAX_ENTRIES} states.
 */
public final class FgdScorer {

    public static final int MAX_ENTRIES = 1_000_000;

    private record Key(String model, long cpu, long mem, int[] sortedFree) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && cpu == k.cpu && mem == k.mem && java.util.Objects.equals(model, k.model)
                    && Arrays.equals(sortedFree, k.sortedFree);
        }

        @Override
        public int hashCode() {
            return (Long.hashCode(cpu) * 31 + Long.hashCode(mem)) * 31 + Arrays.hashCode(sortedFree)
                    + (model == null ? 0 : model.hashCode());
        }
    }

    private final Distribution distribution;
    private final Map<Key, Double> memo = new HashMap<>();

    public FgdScorer(Distribution distribution) {
        this.distribution = distribution;
    }

    public Distribution distribution() {
        return distribution;
    }

    /** F(node, distribution), memoised. */
    public double fragmentation(NodeView node) {
        int[] free = node.gpuFreeMilli();
        Arrays.sort(free);
        Key key = new Key(node.gpuModel(), node.cpuFreeMilli(), node.memoryFreeMib(), free);
        Double f = memo.get(key);
        if (f == null) {
            if (memo.size() >= MAX_ENTRIES) {
                memo.clear();
            }
            f = FragmentationScorer.fragmentation(node, distribution);
            memo.put(key, f);
        }
        return f;
    }

    /** The best GPUs for the task on the node and the fragmentation change; empty when it does not fit. */
    public Optional<FragmentationScorer.Scored> best(NodeView node, TaskShape task) {
        if (!Fits.fits(node, task)) {
            return Optional.empty();
        }
        double before = fragmentation(node);
        FragmentationScorer.Scored best = null;
        for (GpuChoice choice : FragmentationScorer.candidates(node, task)) {
            double delta = fragmentation(node.after(task, choice)) - before;
            if (best == null || delta < best.delta()) {
                best = new FragmentationScorer.Scored(choice, delta);
            }
        }
        return Optional.ofNullable(best);
    }
}
