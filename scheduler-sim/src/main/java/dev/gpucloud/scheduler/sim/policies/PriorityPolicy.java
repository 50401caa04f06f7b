package dev.gpucloud.scheduler.sim.policies;

import dev.gpucloud.scheduler.sim.engine.Decisions;
import dev.gpucloud.scheduler.sim.engine.Policy;
import dev.gpucloud.scheduler.sim.engine.SimCluster;
import dev.gpucloud.scheduler.sim.engine.SimJob;
import java.util.Comparator;
import java.util.List;

/**
 * A policy that ranks jobs and fills the cluster greedily in rank order, skipping a job that does not
 * fit (backfill). Preemptive policies rank queued and running jobs together: a running job keeps its
 * GPUs while it ranks high enough to get them, is moved when a higher-ranked job had to take its host,
 * and is preempted (checkpoint-resume) otherwise. Non-preemptive ones keep every running job and rank
 * only the queued ones. Subclasses set each active job's key ({@link SimJob#setKey}); lower runs first.
 */
public abstract class PriorityPolicy implements Policy {

    private static final Comparator<SimJob> ORDER = (a, b) -> {
        int c = Double.compare(a.key(), b.key());
        if (c != 0) {
            return c;
        }
        c = Long.compare(tie(a), tie(b));
        return c != 0 ? c : Integer.compare(a.index(), b.index());
    };

    private static long tie(SimJob j) {
        return j.submitMillis();
    }

    protected abstract boolean preemptive();

    /** Sets the key of every job in {@code active} for a decision at {@code now}. */
    protected abstract void setKeys(List<SimJob> active, long now);

    @Override
    public void schedule(Decisions d) {
        SimCluster c = d.cluster();
        List<SimJob> active = d.active();
        setKeys(active, d.now());
        active.sort(ORDER);
        int n = c.hostCount();
        int[] free = new int[n];
        int[] reserved = new int[n];
        int freeTotal = 0;
        List<SimJob> keeps = new java.util.ArrayList<>();
        List<SimJob> starts = new java.util.ArrayList<>();
        List<GangPlacer.Gang> gangs = new java.util.ArrayList<>();
        for (int h = 0; h < n; h++) {
            free[h] = c.isDown(h) ? 0 : c.gpus(h);
        }
        for (SimJob j : d.running()) {
            int[] hosts = j.hosts();
            int[] per = j.perHost();
            for (int i = 0; i < hosts.length; i++) {
                if (preemptive()) {
                    reserved[hosts[i]] += per[i];
                } else {
                    free[hosts[i]] -= per[i];
                }
            }
            if (!preemptive()) {
                keeps.add(j);
            }
        }
        for (int h = 0; h < n; h++) {
            freeTotal += c.placeable(h) || preemptive() ? free[h] : 0;
        }
        for (SimJob j : active) {
            if (freeTotal <= 0) {
                break;
            }
            if (j.running()) {
                if (!preemptive()) {
                    continue;
                }
                int[] hosts = j.hosts();
                int[] per = j.perHost();
                boolean fits = true;
                for (int i = 0; i < hosts.length; i++) {
                    fits &= free[hosts[i]] >= per[i];
                }
                for (int i = 0; i < hosts.length; i++) {
                    reserved[hosts[i]] -= per[i];
                }
                if (fits) {
                    for (int i = 0; i < hosts.length; i++) {
                        free[hosts[i]] -= per[i];
                        freeTotal -= per[i];
                    }
                    keeps.add(j);
                    continue;
                }
            }
            GangPlacer.Gang g = GangPlacer.place(c, j.gpus(), free, reserved);
            if (g != null) {
                for (int i = 0; i < g.hosts().length; i++) {
                    free[g.hosts()[i]] -= g.perHost()[i];
                    freeTotal -= g.perHost()[i];
                }
                starts.add(j);
                gangs.add(g);
            }
        }
        commit(d, keeps, starts, gangs);
    }

    /**
     * Applies the plan: keeps {@code keeps} where they run and starts {@code starts} (in rank order) on
     * the gangs the GPU-count plan chose. A subclass may place the starts otherwise (through the
     * production placement framework); a start it cannot place stays queued.
     */
    protected void commit(Decisions d, List<SimJob> keeps, List<SimJob> starts, List<GangPlacer.Gang> gangs) {
        for (SimJob j : keeps) {
            d.keep(j);
        }
        for (int i = 0; i < starts.size(); i++) {
            d.assign(starts.get(i), gangs.get(i).hosts(), gangs.get(i).perHost());
        }
    }
}
