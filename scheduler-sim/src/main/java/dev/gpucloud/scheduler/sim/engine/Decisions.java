package dev.gpucloud.scheduler.sim.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What a policy sees and does at one decision: the time, the cluster, the active jobs (queued and
 * running), and the plan it builds: {@link #keep} a running job where it is, {@link #assign} a job to
 * hosts. A running job neither kept nor assigned is preempted (checkpoint-resume); a running job
 * assigned elsewhere migrates (preempted, then started there). The engine checks the plan fits.
 */
public final class Decisions {

    final Simulator sim;
    final List<SimJob> planned = new ArrayList<>();
    int stamp;

    Decisions(Simulator sim) {
        this.sim = sim;
    }

    public long now() {
        return sim.now;
    }

    public SimCluster cluster() {
        return sim.cluster;
    }

    /** Queued and running jobs, in no particular order; the policy may sort this list in place. */
    public List<SimJob> active() {
        return sim.active;
    }

    /** Running jobs, in no particular order (do not modify). */
    public List<SimJob> running() {
        return Collections.unmodifiableList(sim.running);
    }

    /** Jobs that arrived so far and are not done. */
    public int activeCount() {
        return sim.active.size();
    }

    /** Leaves a running job where it is. */
    public void keep(SimJob job) {
        if (!job.running()) {
            throw new IllegalArgumentException(job + " is not running: assign it instead of keeping it");
        }
        job.planStamp = stamp;
        job.planHosts = null;
        planned.add(job);
    }

    /** Runs the job on these hosts, {@code perHost[i]} GPUs on {@code hosts[i]}. */
    public void assign(SimJob job, int[] hosts, int[] perHost) {
        if (job.state != SimJob.State.QUEUED && job.state != SimJob.State.RUNNING) {
            throw new IllegalArgumentException(job + " cannot be assigned");
        }
        if (hosts.length == 0 || hosts.length != perHost.length) {
            throw new IllegalArgumentException(job + ": hosts and GPUs per host must be non-empty and of one length");
        }
        int sum = 0;
        for (int g : perHost) {
            sum += g;
        }
        if (sum < job.gpus()) {
            throw new IllegalArgumentException(job + ": assigned " + sum + " GPUs, needs " + job.gpus());
        }
        job.planStamp = stamp;
        job.planHosts = hosts;
        job.planPerHost = perHost;
        planned.add(job);
    }
}
