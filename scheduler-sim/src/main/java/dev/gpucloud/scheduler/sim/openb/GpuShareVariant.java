package dev.gpucloud.scheduler.sim.openb;

import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * A variant of an openb pod list in which a chosen share of the GPU pods share one GPU (a fraction of
 * it), as the FGD paper's GPU-sharing workloads vary that share: multigpu50 has 38.6% (3,078 of 7,973
 * GPU pods); the variants have 20%, 40%, 60% or 80%. CPU-only pods stay as they are.
 *
 * <p>To raise the share, whole-GPU pods (1-GPU pods first, then multi-GPU ones, each set in a seeded
 * random order) become pods of one GPU fraction, its milli drawn from the fractions the list's sharing
 * pods already ask for (so the variant keeps the list's mix of fraction sizes); a multi-GPU pod keeps
 * its CPU and memory per GPU. To lower it, sharing pods (in a seeded random order) take their GPU
 * whole. The list keeps its size and order; the experiment's arrival tuning then brings its GPU
 * demand to the target as for any list.
 */
public final class GpuShareVariant {

    private GpuShareVariant() {
    }

    /** The variant of {@code pods} with {@code sharePercent} (0..100) of its GPU pods sharing a GPU. */
    public static List<OpenbPod> of(List<OpenbPod> pods, int sharePercent, long seed) {
        if (sharePercent < 0 || sharePercent > 100) {
            throw new IllegalArgumentException("the share of GPU-sharing pods must be 0..100 %, was " + sharePercent);
        }
        List<Integer> sharing = new ArrayList<>();
        List<Integer> oneGpu = new ArrayList<>();
        List<Integer> multiGpu = new ArrayList<>();
        List<Integer> fractions = new ArrayList<>();
        for (int i = 0; i < pods.size(); i++) {
            OpenbPod p = pods.get(i);
            if (p.isShare()) {
                sharing.add(i);
                fractions.add(p.gpuMilli());
            } else if (p.numGpu() == 1) {
                oneGpu.add(i);
            } else if (p.numGpu() > 1) {
                multiGpu.add(i);
            }
        }
        int gpuPods = sharing.size() + oneGpu.size() + multiGpu.size();
        if (gpuPods == 0) {
            throw new IllegalArgumentException("the pod list has no GPU pod to share");
        }
        if (fractions.isEmpty() && sharePercent > 0) {
            throw new IllegalArgumentException("the pod list has no GPU-sharing pod to take fraction sizes from");
        }
        int target = (int) Math.round(gpuPods * sharePercent / 100.0);
        Random rnd = new Random(seed);
        Collections.shuffle(sharing, rnd);
        Collections.shuffle(oneGpu, rnd);
        Collections.shuffle(multiGpu, rnd);
        List<OpenbPod> out = new ArrayList<>(pods);
        int shared = sharing.size();
        List<Integer> whole = new ArrayList<>(oneGpu);
        whole.addAll(multiGpu);
        for (int k = 0; shared < target; k++, shared++) {
            OpenbPod p = pods.get(whole.get(k));
            out.set(whole.get(k), new OpenbPod(p.name(), p.cpuMilli() / p.numGpu(), p.memoryMib() / p.numGpu(), 1,
                    fractions.get(rnd.nextInt(fractions.size()))));
        }
        for (int k = 0; shared > target; k++, shared--) {
            OpenbPod p = pods.get(sharing.get(k));
            out.set(sharing.get(k), new OpenbPod(p.name(), p.cpuMilli(), p.memoryMib(), 1, OpenbPod.WHOLE_GPU_MILLI));
        }
        return out;
    }

    /** The share of GPU pods that share a GPU, in percent. */
    public static double sharePercent(List<OpenbPod> pods) {
        long gpu = pods.stream().filter(p -> p.numGpu() > 0).count();
        long sharing = pods.stream().filter(OpenbPod::isShare).count();
        return gpu == 0 ? 0 : 100.0 * sharing / gpu;
    }
}
