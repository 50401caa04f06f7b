package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.List;

/**
 * Shortest remaining time first (an oracle: it reads each job's remaining work), preemptive. With
 * {@code weighByGpus} it is SRSF: shortest remaining service, remaining time x GPUs.
 */
public final class Srtf extends PriorityPolicy {

    private final boolean weighByGpus;

    public Srtf(boolean weighByGpus) {
        this.weighByGpus = weighByGpus;
    }

    public static Srtf srtf() {
        return new Srtf(false);
    }

    public static Srtf srsf() {
        return new Srtf(true);
    }

    @Override
    public String name() {
        return weighByGpus ? "srsf" : "srtf";
    }

    @Override
    public boolean knowsDurations() {
        return true;
    }

    @Override
    protected boolean preemptive() {
        return true;
    }

    @Override
    protected void setKeys(List<SimJob> active, long now) {
        for (SimJob j : active) {
            double remaining = j.remainingMillis();
            j.setKey(weighByGpus ? remaining * j.gpus() : remaining, 0);
        }
    }
}
