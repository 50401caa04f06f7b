package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.packing.Distribution;
import dev.gpucloud.scheduler.packing.FgdScorer;
import dev.gpucloud.scheduler.packing.FragmentationScorer;
import dev.gpucloud.scheduler.packing.NodeView;
import dev.gpucloud.scheduler.packing.TaskShape;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;

/**
 * Fragmentation gradient descent (Weng et al., ATC'23) as a score: prefer the host where placing
 * this worker grows the expected unusable GPU share least, for the shapes the cluster actually
 * runs. The workload's shapes come from the jobs the scheduler has seen lately ({@link #observe}),
 * the most common ones covering 95%. The math is {@code packing.FragmentationScorer}, the same the
 * simulator's openb experiment runs. MIG requests, and any request before a shape was observed,
 * score a neutral 50.
 */
public final class FragmentationGradientScore implements Plugins.Score {

    public static final String NAME = "FragmentationGradient";
    /** One GPU of fragmentation change moves the score by this many points (a whole host's worth spans 0..100). */
    private static final double POINTS_PER_GPU = 6.25;

    private final int window;
    private final ArrayDeque<TaskShape> recent = new ArrayDeque<>();
    private FgdScorer scorer;
    private int sinceRebuild;

    /** Keeps the last {@code window} shapes seen. */
    public FragmentationGradientScore(int window) {
        if (window < 1) {
            throw new IllegalArgumentException("window must be at least 1");
        }
        this.window = window;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Notes one worker shape of a job the scheduler accepted. */
    public void observe(PlacementRequest r) {
        shapeOf(r).ifPresent(shape -> {
            recent.addLast(shape);
            if (recent.size() > window) {
                recent.removeFirst();
            }
            // rebuild the distribution now and then, not on every job: it changes slowly
            if (scorer == null || ++sinceRebuild >= Math.max(16, window / 10)) {
                scorer = new FgdScorer(Distribution.of(List.copyOf(recent), 0.95));
                sinceRebuild = 0;
            }
        });
    }

    /** The distribution in use, if any shape was observed. */
    public Optional<Distribution> distribution() {
        return scorer == null ? Optional.empty() : Optional.of(scorer.distribution());
    }

    @Override
    public int score(CycleState state, PlacementRequest r, NodeState node) {
        Optional<TaskShape> task = shapeOf(r);
        if (scorer == null || task.isEmpty()) {
            return 50;
        }
        Optional<FragmentationScorer.Scored> best = scorer.best(view(node), task.get());
        if (best.isEmpty()) {
            return 0;
        }
        double gpus = best.get().delta() / NodeView.WHOLE;
        return PackingScore.clamp((int) Math.round(50 - gpus * POINTS_PER_GPU));
    }

    static Optional<TaskShape> shapeOf(PlacementRequest r) {
        return switch (r.kind()) {
            case WHOLE -> Optional.of(new TaskShape(r.gpusPerWorker(), NodeView.WHOLE, r.cpuMillis(), r.memoryMib(), null));
            case FRACTION -> Optional.of(new TaskShape(1, r.milliGpu(), r.cpuMillis(), r.memoryMib(), null));
            case MIG -> Optional.empty();
        };
    }

    /** What is free on the host, as the packing math sees it (MIG-mode GPUs offer no share). */
    static NodeView view(NodeState node) {
        int[] free = new int[node.gpuCount()];
        for (int i = 0; i < free.length; i++) {
            GpuState g = node.gpu(i);
            free[i] = g.freeMilli();
        }
        return new NodeView(node.id(), free, Math.max(0, node.cpuFree()), Math.max(0, node.memoryFree()), null,
                node.cpuMillis());
    }
}
