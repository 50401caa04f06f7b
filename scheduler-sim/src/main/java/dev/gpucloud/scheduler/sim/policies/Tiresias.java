package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.Decisions;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.List;

/**
 * Tiresias's discretized two-dimensional LAS (Gu et al., NSDI'19) as Muri's simulator runs it: a job's
 * queue is set by its attained GPU-service (GPU-seconds: time run x GPUs) against the limits, 3,250 /
 * 7,200 / 18,000 GPU-seconds by default (so 4 queues, the last unbounded); lower queues run first, FIFO
 * by submission within a queue; preemptive through checkpoint-resume. No duration knowledge. The policy
 * asks for a decision when a running job will cross its queue's limit.
 */
public class Tiresias extends PriorityPolicy {

    public static final double[] DEFAULT_LIMITS = {3_250, 7_200, 18_000};

    private final double[] limits;
    private final String name;

    public Tiresias() {
        this("tiresias", DEFAULT_LIMITS);
    }

    /** Tiresias with other queue limits (GPU-seconds, increasing). */
    public static Tiresias withLimits(double... limitsGpuSeconds) {
        return new Tiresias("tiresias", limitsGpuSeconds);
    }

    protected Tiresias(String name, double[] limitsGpuSeconds) {
        this.name = name;
        this.limits = limitsGpuSeconds.clone();
        for (int i = 1; i < limits.length; i++) {
            if (!(limits[i] > limits[i - 1])) {
                throw new IllegalArgumentException("queue limits must increase: " + java.util.Arrays.toString(limits));
            }
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    protected boolean preemptive() {
        return true;
    }

    protected int queueOf(SimJob j) {
        double s = j.attainedGpuSeconds();
        int q = 0;
        while (q < limits.length && s >= limits[q]) {
            q++;
        }
        return q;
    }

    @Override
    protected void setKeys(List<SimJob> active, long now) {
        for (SimJob j : active) {
            j.setKey(queueOf(j), 0);
        }
    }

    /** When the first running job crosses its queue's upper limit. */
    @Override
    public long nextTick(Decisions d) {
        long next = Long.MAX_VALUE;
        for (SimJob j : d.running()) {
            int q = queueOf(j);
            if (q >= limits.length) {
                continue;
            }
            double leftGpuSeconds = limits[q] - j.attainedGpuSeconds();
            long at = d.now() + j.restoreLeftMillis(d.now()) + (long) Math.ceil(leftGpuSeconds * 1000 / j.gpus());
            next = Math.min(next, Math.max(at, d.now() + 1));
        }
        return next;
    }
}
