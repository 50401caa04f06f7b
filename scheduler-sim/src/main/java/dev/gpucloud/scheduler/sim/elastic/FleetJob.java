package dev.gpucloud.scheduler.sim.elastic;

import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.util.List;

/**
 * A trace job as the fleet runs it: {@code workers} x {@code gpusPerWorker} GPUs (a job of up to 8 GPUs is one
 * worker; a larger one is split into workers of at most 8 GPUs, one per host), the work it has saved in its last
 * checkpoint, and where it runs now. Mutable, private to one simulation.
 */
final class FleetJob {

    final TraceJob trace;
    final int workers;
    final int gpusPerWorker;
    final boolean checkpointable;
    /** Work saved in the last checkpoint (ms of progress). */
    long savedMillis;
    /** Overhead still to pay before progress resumes (ms), set on every requeue. */
    long overheadMillis;
    long queuedSince;
    long startedAt = -1;
    long finishedAt = -1;
    /** Bumped at every start: a finish event of an earlier start is stale. */
    int epoch;
    List<SimHost> hosts = List.of();
    int requeues;

    FleetJob(TraceJob trace, boolean checkpointable) {
        this.trace = trace;
        this.checkpointable = checkpointable;
        int g = trace.gpus();
        int per = Math.min(g, SimHost.MAX_GPUS);
        while (g % per != 0) {
            per--;
        }
        this.gpusPerWorker = per;
        this.workers = g / per;
        this.queuedSince = trace.submitMillis();
    }

    String id() {
        return trace.id();
    }

    int gpus() {
        return trace.gpus();
    }

    boolean running() {
        return startedAt >= 0;
    }

    /** When the job finishes if it runs undisturbed from {@code start}. */
    long finishIfStartedAt(long start) {
        return start + overheadMillis + (trace.durationMillis() - savedMillis);
    }

    /** The progress made by {@code now} in the current run, counting the resume overhead as no progress. */
    long progressAt(long now) {
        return Math.max(0, now - startedAt - overheadMillis);
    }
}
