package dev.gpucloud.scheduler.packing;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * FGD's fragmentation measure (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
 * with Fragmentation Gradient Descent", USENIX ATC'23), in milli-GPU. Pure functions; see
 * package-info for the definition.
 */
public final class FragmentationScorer {

    private FragmentationScorer() {
    }

    /** GPU milli of {@code node} that task {@code m} cannot use. */
    public static double fragmentation(NodeView node, TaskShape m) {
        if (!Fits.fits(node, m)) {
            return node.totalGpuFree();
        }
        int threshold = m.perGpuMilli();
        int sum = 0;
        for (int g = 0; g < node.gpuCount(); g++) {
            int free = node.gpuFree(g);
            if (free < threshold) {
                sum += free;
            }
        }
        return sum;
    }

    /** Expected GPU milli of {@code node} that a task drawn from {@code dist} cannot use. */
    public static double fragmentation(NodeView node, Distribution dist) {
        double f = 0;
        for (Distribution.Entry e : dist.entries()) {
            f += e.weight() * fragmentation(node, e.shape());
        }
        return f;
    }

    /**
     * The change of the node's fragmentation when {@code task} takes its best GPUs on it (lower is
     * better, may be negative); empty when the task does not fit.
     */
    public static OptionalDouble score(NodeView node, TaskShape task, Distribution dist) {
        Optional<Scored> best = best(node, task, dist);
        return best.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(best.get().delta());
    }

    /** The GPUs of the node at which {@code task} increases fragmentation least; empty when it does not fit. */
    public static Optional<GpuChoice> bestGpus(NodeView node, TaskShape task, Distribution dist) {
        return best(node, task, dist).map(Scored::gpus);
    }

    /** A choice of GPUs and its fragmentation delta. */
    public record Scored(GpuChoice gpus, double delta) {
    }

    /** The best choice of GPUs on this node, with its delta; empty when the task does not fit. */
    public static Optional<Scored> best(NodeView node, TaskShape task, Distribution dist) {
        if (!Fits.fits(node, task)) {
            return Optional.empty();
        }
        double before = fragmentation(node, dist);
        Scored best = null;
        for (GpuChoice choice : candidates(node, task)) {
            double delta = fragmentation(node.after(task, choice), dist) - before;
            if (best == null || delta < best.delta()) {
                best = new Scored(choice, delta);
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * The distinct ways a fitting task can take GPUs of the node: none for CPU-only tasks; for a share,
     * one GPU per distinct free amount that fits (the lowest index); for whole GPUs, the lowest-index
     * wholly free ones (all such choices leave the same node).
     */
    public static List<GpuChoice> candidates(NodeView node, TaskShape task) {
        if (task.numGpu() == 0) {
            return List.of(GpuChoice.NONE);
        }
        if (task.numGpu() == 1) {
            java.util.ArrayList<GpuChoice> out = new java.util.ArrayList<>();
            java.util.BitSet seen = new java.util.BitSet(NodeView.WHOLE + 1);
            for (int g = 0; g < node.gpuCount(); g++) {
                int free = node.gpuFree(g);
                if (free >= task.gpuMilli() && !seen.get(free)) {
                    seen.set(free);
                    out.add(GpuChoice.of(g));
                }
            }
            return out;
        }
        int[] chosen = new int[task.numGpu()];
        int n = 0;
        for (int g = 0; g < node.gpuCount() && n < chosen.length; g++) {
            if (node.gpuFree(g) == NodeView.WHOLE) {
                chosen[n++] = g;
            }
        }
        return n == chosen.length ? List.of(new GpuChoice(chosen)) : List.of();
    }
}
