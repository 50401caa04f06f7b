package dev.gpucloud.scheduler.framework;

import dev.gpucloud.geometry.GpuAdmission;
import dev.gpucloud.geometry.MigProfile;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.util.ArrayList;
import java.util.List;

/**
 * Chooses the GPUs of one worker on a host that passed every filter. Whole GPUs come from the
 * NVLink island with the fewest free GPUs that still fits (whole islands stay free for NVLink
 * jobs); a fraction goes to the shared GPU it fills best; a MIG slice to the fullest MIG GPU, at
 * the start that keeps the larger profiles placeable.
 */
final class GpuPicker {

    private GpuPicker() {
    }

    static Assignment pick(PlacementRequest r, NodeState node, int rank) {
        return switch (r.kind()) {
            case WHOLE -> whole(r, node, rank);
            case FRACTION -> fraction(r, node, rank);
            case MIG -> mig(r, node, rank);
        };
    }

    private static Assignment whole(PlacementRequest r, NodeState node, int rank) {
        int n = node.gpuCount();
        int[] islandFree = new int[n + 1];
        for (int i = 0; i < n; i++) {
            GpuState g = node.gpu(i);
            if (g.isWholeFree() && r.accepts(g)) {
                islandFree[islandOf(g, n)]++;
            }
        }
        int need = r.gpusPerWorker();
        List<Integer> chosen = new ArrayList<>(need);
        if (r.nvlink()) {
            int island = -1;
            for (int k = 0; k < n; k++) {
                if (islandFree[k] >= need && (island < 0 || islandFree[k] < islandFree[island])) {
                    island = k;
                }
            }
            if (island < 0) {
                return null;
            }
            for (int i = 0; i < n && chosen.size() < need; i++) {
                GpuState g = node.gpu(i);
                if (g.isWholeFree() && r.accepts(g) && islandOf(g, n) == island) {
                    chosen.add(g.index());
                }
            }
        } else if (freeCount(islandFree) == need) {
            // every free GPU goes: no choice to make (the whole-host case of gangs and 8-GPU jobs)
            for (int i = 0; i < n; i++) {
                GpuState g = node.gpu(i);
                if (g.isWholeFree() && r.accepts(g)) {
                    chosen.add(g.index());
                }
            }
            chosen.sort(null);
        } else {
            boolean[] used = new boolean[n];
            while (chosen.size() < need) {
                int best = -1;
                for (int i = 0; i < n; i++) {
                    GpuState g = node.gpu(i);
                    if (!used[i] && g.isWholeFree() && r.accepts(g)
                            && (best < 0 || islandFree[islandOf(g, n)] < islandFree[islandOf(node.gpu(best), n)])) {
                        best = i;
                    }
                }
                if (best < 0) {
                    return null;
                }
                used[best] = true;
                chosen.add(node.gpu(best).index());
            }
            chosen.sort(null);
        }
        return Assignment.whole(r.allocationId(rank), r.jobId(), r.tenant(), rank, node.id(), chosen, r.cpuMillis(),
                r.memoryMib());
    }

    private static int freeCount(int[] islandFree) {
        int sum = 0;
        for (int c : islandFree) {
            sum += c;
        }
        return sum;
    }

    private static int islandOf(GpuState g, int n) {
        return g.island() >= 0 && g.island() < n ? g.island() : n;
    }

    private static Assignment fraction(PlacementRequest r, NodeState node, int rank) {
        GpuState best = null;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (r.accepts(g) && GpuAdmission.shareFits(g.mig(), g.usedMilli(), r.milliGpu())
                    && (best == null || g.freeMilli() < best.freeMilli())) {
                best = g;
            }
        }
        if (best == null) {
            return null;
        }
        return new Assignment(r.allocationId(rank), r.jobId(), r.tenant(), rank, node.id(), List.of(best.index()), null,
                -1, r.milliGpu(), r.cpuMillis(), r.memoryMib());
    }

    private static Assignment mig(PlacementRequest r, NodeState node, int rank) {
        GpuState best = null;
        int bestStart = -1;
        for (int i = 0; i < node.gpuCount(); i++) {
            GpuState g = node.gpu(i);
            if (g.mig() == null || !r.acceptsModel(g)) {
                continue;
            }
            MigProfile p = g.mig().profile(r.migProfile()).orElse(null);
            if (p == null) {
                continue;
            }
            int start = g.mig().bestStart(p, g.migMask());
            if (start >= 0 && (best == null || g.mig().slicesUsed(g.migMask()) > best.mig().slicesUsed(best.migMask()))) {
                best = g;
                bestStart = start;
            }
        }
        if (best == null) {
            return null;
        }
        return new Assignment(r.allocationId(rank), r.jobId(), r.tenant(), rank, node.id(), List.of(best.index()),
                r.migProfile(), bestStart, 0, r.cpuMillis(), r.memoryMib());
    }
}
