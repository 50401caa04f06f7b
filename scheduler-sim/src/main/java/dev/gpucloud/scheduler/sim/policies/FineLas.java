package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.Decisions;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.List;

/**
 * Fine-grained least attained service ("fine-las"), a research policy told no job's duration: least
 * attained GPU-service first (a job's service is time run x GPUs) on fine geometric queues,
 * {@value #FIRST_LIMIT} GPU-seconds x 2^k, instead of Tiresias's three coarse ones; within a queue, fewer GPUs first (the expected service of a job not
 * yet run grows with its GPUs), then earlier submission. Preemptive through checkpoint-resume, with
 * gang placement as {@link GangPlacer}. It asks for a decision when a running job crosses its queue's
 * limit. Why this design and what it gives: docs/results.md.
 *
 * <p>Where the cluster came from a model (host inventories), the jobs to start are placed through the
 * production placement framework ({@link FrameworkBridge}), the plugins the scheduler service runs; on
 * a bare cluster of GPU counts (unit tests) through {@link GangPlacer}.
 */
public final class FineLas extends Tiresias {

    public static final double FIRST_LIMIT = 600;
    public static final int QUEUES = 40;

    private FrameworkBridge bridge;
    private boolean bridgeChecked;

    public FineLas() {
        super("fine-las", limits(FIRST_LIMIT, 2, QUEUES - 1));
    }

    /** The bridge to the placement framework, once a decision has been made on a cluster with inventories. */
    public FrameworkBridge bridge() {
        return bridge;
    }

    @Override
    protected void commit(Decisions d, List<SimJob> keeps, List<SimJob> starts, List<GangPlacer.Gang> gangs) {
        if (!bridgeChecked) {
            bridgeChecked = true;
            if (!d.cluster().inventories().isEmpty()) {
                bridge = new FrameworkBridge(d.cluster());
            }
        }
        if (bridge == null) {
            super.commit(d, keeps, starts, gangs);
            return;
        }
        bridge.sync(d.now());
        java.util.Set<SimJob> kept = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        kept.addAll(keeps);
        for (SimJob j : d.running()) {
            if (!kept.contains(j)) {
                bridge.release(j);
            }
        }
        for (SimJob j : keeps) {
            d.keep(j);
        }
        for (SimJob j : starts) {
            GangPlacer.Gang g = bridge.place(j, d.now());
            if (g != null) {
                d.assign(j, g.hosts(), g.perHost());
            }
        }
    }

    static double[] limits(double first, double factor, int count) {
        double[] out = new double[count];
        double v = first;
        for (int i = 0; i < count; i++) {
            out[i] = v;
            v *= factor;
        }
        return out;
    }

    @Override
    protected void setKeys(List<SimJob> active, long now) {
        for (SimJob j : active) {
            j.setKey(queueOf(j) * 100_000.0 + j.gpus(), 0);
        }
    }
}
