package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.List;

/** FIFO with backfill: in submission order, every queued job that fits starts; nothing is preempted. */
public final class Fifo extends PriorityPolicy {

    @Override
    public String name() {
        return "fifo";
    }

    @Override
    protected boolean preemptive() {
        return false;
    }

    @Override
    protected void setKeys(List<SimJob> active, long now) {
        for (SimJob j : active) {
            j.setKey(j.submitMillis(), 0);
        }
    }
}
