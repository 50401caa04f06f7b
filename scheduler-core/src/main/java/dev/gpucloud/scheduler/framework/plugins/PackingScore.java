package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;

/**
 * Fragmentation-aware packing: put work where it leaves the least unusable room, so whole GPUs and
 * whole hosts stay free for the shapes that need them (an 8-GPU job gets one 8-GPU host, not two
 * halves). Whole GPUs: the fuller the host afterwards the better, and breaking into an untouched
 * host costs extra. Fractions: the shared GPU left with the least free milli, never a fresh GPU
 * while a shared one fits. MIG: the GPU whose slices end up fullest.
 */
public final class PackingScore implements Plugins.Score {

    public static final String NAME = "Packing";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int score(CycleState state, PlacementRequest r, NodeState node) {
        int total = node.gpuCount();
        if (total == 0) {
            return 0;
        }
        switch (r.kind()) {
            case WHOLE -> {
                int after = node.wholeFree() - r.gpusPerWorker();
                int s = 100 * (total - after) / total;
                if (node.wholeFree() == total && after > 0) {
                    s = s / 2;
                }
                return clamp(s);
            }
            case FRACTION -> {
                int bestLeft = Integer.MAX_VALUE;
                int used = 0;
                for (int i = 0; i < total; i++) {
                    GpuState g = node.gpu(i);
                    used += g.mig() == null ? g.usedMilli() : 1000;
                    int left = g.freeMilli() - r.milliGpu();
                    if (g.mig() == null && left >= 0 && Gpus.allowed(r, g) && left < bestLeft) {
                        bestLeft = left;
                    }
                }
                if (bestLeft == Integer.MAX_VALUE) {
                    return 0;
                }
                int gpuPart = bestLeft == 1000 - r.milliGpu() ? 0 : 60 * (1000 - bestLeft) / 1000;
                return clamp(gpuPart + 40 * used / (1000 * total));
            }
            case MIG -> {
                // the fullest MIG GPU that can take the slice, as the host keeps it current
                return clamp(node.migBestPercent(r.migProfile()));
            }
            default -> {
                return 0;
            }
        }
    }

    static int clamp(int s) {
        return Math.max(0, Math.min(100, s));
    }
}
