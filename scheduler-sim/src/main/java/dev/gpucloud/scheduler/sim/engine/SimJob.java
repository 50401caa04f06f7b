package dev.gpucloud.scheduler.sim.engine;

import dev.gpucloud.scheduler.sim.trace.TraceJob;

/**
 * One job's state during a simulation. Times are milliseconds of virtual time. Policies read it
 * (they must not change it); the engine moves it. {@code remainingMillis} is the work left (undisturbed
 * run time); {@code attainedMillis} the work done so far, so attained GPU-service is
 * {@code attainedMillis x gpus}.
 */
public final class SimJob {

    /** Where a job is. */
    public enum State { FUTURE, QUEUED, RUNNING, DONE }

    final int index;
    final TraceJob trace;
    State state = State.FUTURE;
    long remainingMillis;
    long attainedMillis;
    long firstStartMillis = -1;
    long finishMillis = -1;
    /** Progress resumes at this time (after restore); progress is counted from max(lastSync, resumeAt). */
    long resumeAtMillis;
    long lastSyncMillis;
    /** Work done in the current run segment since it began making progress (for checkpoints). */
    long segmentProgressMillis;
    int[] hosts = new int[0];
    int[] perHost = new int[0];
    int epoch;
    int preemptions;
    int interruptions;
    long lostGpuMillis;
    long overheadGpuMillis;
    long allocatedGpuMillis;
    /** When the job last became queued (arrival or preemption), for policies that age jobs. */
    long queuedSinceMillis;
    /** Overhead (checkpoint and restore) the next start pays. */
    long pendingOverheadMillis;
    int activePos = -1;
    int runningPos = -1;
    int planStamp = -1;
    int[] planHosts;
    int[] planPerHost;
    /** A policy's sort key, set by the policy before each decision. */
    double key;
    long key2;

    SimJob(int index, TraceJob trace) {
        this.index = index;
        this.trace = trace;
        this.remainingMillis = trace.durationMillis();
    }

    public int index() {
        return index;
    }

    public String id() {
        return trace.id();
    }

    public TraceJob trace() {
        return trace;
    }

    public int gpus() {
        return trace.gpus();
    }

    public long submitMillis() {
        return trace.submitMillis();
    }

    /** The undisturbed run time; only oracle policies may read it. */
    public long durationMillis() {
        return trace.durationMillis();
    }

    /** Work left; only oracle policies may read it. */
    public long remainingMillis() {
        return remainingMillis;
    }

    public long attainedMillis() {
        return attainedMillis;
    }

    /** Attained GPU-service in GPU-seconds: what a policy without duration knowledge may use. */
    public double attainedGpuSeconds() {
        return attainedMillis / 1000.0 * trace.gpus();
    }

    public State state() {
        return state;
    }

    public boolean running() {
        return state == State.RUNNING;
    }

    public long queuedSinceMillis() {
        return queuedSinceMillis;
    }

    public long firstStartMillis() {
        return firstStartMillis;
    }

    public long finishMillis() {
        return finishMillis;
    }

    public int preemptions() {
        return preemptions;
    }

    public int interruptions() {
        return interruptions;
    }

    public long lostGpuMillis() {
        return lostGpuMillis;
    }

    /** GPU-milliseconds the job held its GPUs without progress (restores after preemption). */
    public long overheadGpuMillis() {
        return overheadGpuMillis;
    }

    /** Host indexes the job runs on now (empty unless running). */
    public int[] hosts() {
        return hosts.clone();
    }

    /** GPUs held on each of {@link #hosts()}. */
    public int[] perHost() {
        return perHost.clone();
    }

    /** Time not counting progress before {@code resumeAtMillis}: restore time left at {@code now}. */
    public long restoreLeftMillis(long now) {
        return Math.max(0, resumeAtMillis - now);
    }

    public void setKey(double key, long tieBreak) {
        this.key = key;
        this.key2 = tieBreak;
    }

    public double key() {
        return key;
    }

    @Override
    public String toString() {
        return "job " + trace.id() + " (" + trace.gpus() + " GPUs, " + state + ")";
    }
}
