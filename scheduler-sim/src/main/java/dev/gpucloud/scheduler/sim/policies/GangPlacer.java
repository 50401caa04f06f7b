package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.SimCluster;

/**
 * YARN-style gang placement on GPU counts per host (the Muri cluster's rule): a job of at most one
 * host's GPUs runs on one host, best fit (the host left with the fewest free GPUs); a bigger job takes
 * whole hosts of the largest size. {@code free[h]} is what the plan leaves on host h so far;
 * {@code reserved[h]} what running jobs not yet decided hold there: hosts whose unreserved GPUs
 * suffice are preferred, so a new job displaces a running one only when nothing else fits.
 */
public final class GangPlacer {

    /** A placement: hosts and GPUs on each. */
    public record Gang(int[] hosts, int[] perHost) {
    }

    private GangPlacer() {
    }

    public static Gang place(SimCluster c, int gpus, int[] free, int[] reserved) {
        int n = c.hostCount();
        if (gpus <= c.maxHostGpus()) {
            int best = -1;
            int bestLeft = Integer.MAX_VALUE;
            boolean bestClean = false;
            for (int h = 0; h < n; h++) {
                if (!c.placeable(h) || free[h] < gpus) {
                    continue;
                }
                boolean clean = free[h] - reserved[h] >= gpus;
                int left = clean ? free[h] - reserved[h] - gpus : free[h] - gpus;
                if (best < 0 || (clean && !bestClean) || (clean == bestClean && left < bestLeft)) {
                    best = h;
                    bestLeft = left;
                    bestClean = clean;
                }
            }
            return best < 0 ? null : new Gang(new int[] {best}, new int[] {gpus});
        }
        int size = c.maxHostGpus();
        int need = (gpus + size - 1) / size;
        int[] chosen = new int[need];
        int k = 0;
        // wholly free hosts of the largest size, unreserved ones first
        for (int pass = 0; pass < 2 && k < need; pass++) {
            for (int h = 0; h < n && k < need; h++) {
                if (c.placeable(h) && c.gpus(h) == size && free[h] == size && (reserved[h] == 0) == (pass == 0)) {
                    chosen[k++] = h;
                }
            }
        }
        if (k < need) {
            return null;
        }
        int[] per = new int[need];
        java.util.Arrays.fill(per, size);
        java.util.Arrays.sort(chosen);
        return new Gang(chosen, per);
    }
}
