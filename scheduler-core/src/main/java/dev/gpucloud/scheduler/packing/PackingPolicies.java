package dev.gpucloud.scheduler.packing;

import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/** The node-choice policies: FGD, BestFit and Random. */
public final class PackingPolicies {

    private PackingPolicies() {
    }

    /** FGD: the node and GPUs whose fragmentation increases least; ties to the lower node index. */
    public static PackingPolicy fgd(Distribution dist) {
        FgdScorer scorer = new FgdScorer(dist);
        return new PackingPolicy() {
            @Override
            public String name() {
                return "fgd";
            }

            @Override
            public Optional<Placement> place(List<NodeView> nodes, TaskShape task) {
                Placement best = null;
                for (int i = 0; i < nodes.size(); i++) {
                    Optional<FragmentationScorer.Scored> s = scorer.best(nodes.get(i), task);
                    if (s.isPresent() && (best == null || s.get().delta() < best.score())) {
                        best = new Placement(i, s.get().gpus(), s.get().delta());
                    }
                }
                return Optional.ofNullable(best);
            }
        };
    }

    /** BestFit: least leftover GPU and CPU share of the node after placement; ties to the lower index. */
    public static PackingPolicy bestFit() {
        return new PackingPolicy() {
            @Override
            public String name() {
                return "bestfit";
            }

            @Override
            public Optional<Placement> place(List<NodeView> nodes, TaskShape task) {
                Placement best = null;
                for (int i = 0; i < nodes.size(); i++) {
                    NodeView n = nodes.get(i);
                    if (!Fits.fits(n, task)) {
                        continue;
                    }
                    double score = leftover(n, task);
                    if (best == null || score < best.score()) {
                        best = new Placement(i, tightestGpus(n, task), score);
                    }
                }
                return Optional.ofNullable(best);
            }
        };
    }

    /** BestFit's score: free GPU share plus free CPU share of the node left after placing the task. */
    public static double leftover(NodeView n, TaskShape task) {
        double gpu = n.gpuCount() == 0 ? 0
                : (n.totalGpuFree() - task.totalGpuMilli()) / (double) (n.gpuCount() * NodeView.WHOLE);
        double cpu = n.cpuCapacityMilli() == 0 ? 0 : (n.cpuFreeMilli() - task.cpuMilli()) / (double) n.cpuCapacityMilli();
        return gpu + cpu;
    }

    /** For a share, the GPU with the least free milli that fits; else the lowest wholly free GPUs. */
    public static GpuChoice tightestGpus(NodeView n, TaskShape task) {
        if (task.numGpu() == 1) {
            int best = -1;
            for (int g = 0; g < n.gpuCount(); g++) {
                int free = n.gpuFree(g);
                if (free >= task.gpuMilli() && (best < 0 || free < n.gpuFree(best))) {
                    best = g;
                }
            }
            return GpuChoice.of(best);
        }
        return FragmentationScorer.candidates(n, task).get(0);
    }

    /** Random: a uniformly random node that fits, and a uniformly random fitting GPU on it. */
    public static PackingPolicy random(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        return new PackingPolicy() {
            @Override
            public String name() {
                return "random";
            }

            @Override
            public Optional<Placement> place(List<NodeView> nodes, TaskShape task) {
                int[] fit = new int[nodes.size()];
                int n = 0;
                for (int i = 0; i < nodes.size(); i++) {
                    if (Fits.fits(nodes.get(i), task)) {
                        fit[n++] = i;
                    }
                }
                if (n == 0) {
                    return Optional.empty();
                }
                int node = fit[rnd.nextInt(n)];
                return Optional.of(new Placement(node, randomGpus(nodes.get(node), task, rnd), 0));
            }
        };
    }

    static GpuChoice randomGpus(NodeView n, TaskShape task, SplittableRandom rnd) {
        if (task.numGpu() == 0) {
            return GpuChoice.NONE;
        }
        int need = task.numGpu() == 1 ? task.gpuMilli() : NodeView.WHOLE;
        int[] ok = new int[n.gpuCount()];
        int k = 0;
        for (int g = 0; g < n.gpuCount(); g++) {
            if (n.gpuFree(g) >= need) {
                ok[k++] = g;
            }
        }
        // a random subset of size numGpu: partial Fisher-Yates, then sorted
        for (int i = 0; i < task.numGpu(); i++) {
            int j = i + rnd.nextInt(k - i);
            int t = ok[i];
            ok[i] = ok[j];
            ok[j] = t;
        }
        int[] chosen = java.util.Arrays.copyOf(ok, task.numGpu());
        java.util.Arrays.sort(chosen);
        return new GpuChoice(chosen);
    }
}
