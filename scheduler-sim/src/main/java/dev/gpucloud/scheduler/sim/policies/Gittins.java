package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.Decisions;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.Arrays;
import java.util.List;

/**
 * An experiment, not the production policy (it came out worse on the Muri traces: docs/results.md).
 * Told no job's duration, it learns the distribution of run times from the
 * jobs that have finished, and runs first the jobs most likely to finish per GPU-second they are
 * given: a two-dimensional Gittins index. For a job that has run {@code a} seconds on {@code g} GPUs,
 * with D the learned run-time distribution,
 *
 * <pre>
 *   index(a, g) = max over b &gt; a of  P(a &lt; D &lt;= b) / (g x E[min(D, b) - a; D &gt; a])
 * </pre>
 *
 * (completion probability per GPU-second of further service), evaluated on a geometric grid of
 * attained times (ratio {@value #GRID_RATIO}). Ties: earlier submission first. Preemptive through
 * checkpoint-resume; gang placement as {@link GangPlacer}. It asks for a decision when a running job
 * crosses a grid point. Before any job has finished, every job has the same index per GPU: fewer
 * GPUs first, then FIFO. The table is rebuilt as finished jobs accumulate (every 5% more, at least 16).
 * Under decreasing hazard rates the index falls with attained service and the policy behaves like
 * least-attained-service; where the learned distribution says jobs tend to finish soon, it keeps them.
 */
public final class Gittins extends PriorityPolicy {

    public static final double GRID_RATIO = 1.25;
    private static final int GRID = 100;
    /** Grid points in seconds: 0, then 1 s x ratio^k. */
    private static final double[] POINTS = new double[GRID];

    static {
        POINTS[0] = 0;
        double v = 1;
        for (int k = 1; k < GRID; k++) {
            POINTS[k] = v;
            v *= GRID_RATIO;
        }
    }

    private double[] samples = new double[256];
    private int sampleCount;
    private int tableBuiltAt = -1;
    private final double[] index = new double[GRID];

    public Gittins() {
        Arrays.fill(index, 1);
    }

    @Override
    public String name() {
        return "gittins";
    }

    @Override
    protected boolean preemptive() {
        return true;
    }

    @Override
    public void completed(SimJob job) {
        if (sampleCount == samples.length) {
            samples = Arrays.copyOf(samples, samples.length * 2);
        }
        samples[sampleCount++] = job.durationMillis() / 1000.0;
    }

    static int cell(double attainedSeconds) {
        if (attainedSeconds < 1) {
            return 0;
        }
        int k = 1 + (int) Math.floor(Math.log(attainedSeconds) / Math.log(GRID_RATIO) + 1e-9);
        return Math.min(GRID - 1, k);
    }

    @Override
    protected void setKeys(List<SimJob> active, long now) {
        if (tableBuiltAt < 0 ? sampleCount > 0 : sampleCount - tableBuiltAt >= Math.max(16, tableBuiltAt / 20)) {
            rebuild();
        }
        for (SimJob j : active) {
            j.setKey(-index[cell(j.attainedMillis() / 1000.0)] / j.gpus(), 0);
        }
    }

    /** The Gittins index at each grid point from the finished jobs' run times. */
    void rebuild() {
        double[] d = Arrays.copyOf(samples, sampleCount);
        Arrays.sort(d);
        int n = d.length;
        // survival S(x) = P(D > x) and M(x) = E[min(D, x)] at each grid point
        double[] survival = new double[GRID];
        double[] meanMin = new double[GRID];
        int i = 0;
        double sumBelow = 0;
        for (int k = 0; k < GRID; k++) {
            double x = POINTS[k];
            while (i < n && d[i] <= x) {
                sumBelow += d[i++];
            }
            survival[k] = (n - i) / (double) n;
            meanMin[k] = (sumBelow + (n - i) * x) / n;
        }
        for (int k = 0; k < GRID; k++) {
            if (survival[k] == 0) {
                // beyond every finished job: least attained first, below every learned index
                index[k] = 1e-12 / (1 + POINTS[k]);
                continue;
            }
            double best = 0;
            for (int b = k + 1; b < GRID; b++) {
                double work = meanMin[b] - meanMin[k];
                if (work > 0) {
                    best = Math.max(best, (survival[k] - survival[b]) / work);
                }
            }
            index[k] = best > 0 ? best : 1e-12 / (1 + POINTS[k]);
        }
        tableBuiltAt = sampleCount;
    }

    /** When the first running job crosses its next grid point. */
    @Override
    public long nextTick(Decisions d) {
        long next = Long.MAX_VALUE;
        for (SimJob j : d.running()) {
            int k = cell(j.attainedMillis() / 1000.0);
            if (k + 1 >= GRID) {
                continue;
            }
            long left = (long) Math.ceil(POINTS[k + 1] * 1000) - j.attainedMillis();
            long at = d.now() + j.restoreLeftMillis(d.now()) + Math.max(1, left);
            next = Math.min(next, at);
        }
        return next;
    }
}
