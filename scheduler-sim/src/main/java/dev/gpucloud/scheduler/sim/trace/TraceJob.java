package dev.gpucloud.scheduler.sim.trace;

/**
 * One job of a trace, as the simulator replays it: submitted {@code submitMillis} after the trace's
 * first submission, running {@code durationMillis} on {@code gpus} GPUs when it runs undisturbed.
 * Times are whole milliseconds so that both Philly (seconds) and Muri (milliseconds) convert
 * exactly. {@code tenant} is the Philly virtual cluster, or "default" where the trace has none;
 * {@code training} is present for Muri's traces only.
 */
public record TraceJob(String id, long submitMillis, long durationMillis, int gpus, String tenant,
        TrainingProfile training) {

    public static final String NO_TENANT = "default";

    public TraceJob {
        if (id == null || id.isBlank()) {
            throw new IllegalArgumentException("a trace job needs an id");
        }
        if (submitMillis < 0) {
            throw new IllegalArgumentException("job " + id + ": submitMillis must be >= 0, was " + submitMillis);
        }
        if (durationMillis <= 0) {
            throw new IllegalArgumentException("job " + id + ": durationMillis must be > 0, was " + durationMillis);
        }
        if (gpus < 1) {
            throw new IllegalArgumentException("job " + id + ": gpus must be >= 1, was " + gpus);
        }
        tenant = tenant == null || tenant.isBlank() ? NO_TENANT : tenant;
    }

    /** A job with no training profile (the Philly list). */
    public static TraceJob of(String id, long submitMillis, long durationMillis, int gpus, String tenant) {
        return new TraceJob(id, submitMillis, durationMillis, gpus, tenant, null);
    }

    public double submitSeconds() {
        return submitMillis / 1000.0;
    }

    public double durationSeconds() {
        return durationMillis / 1000.0;
    }

    /** GPU-seconds the job needs when it runs undisturbed. */
    public double gpuSeconds() {
        return durationSeconds() * gpus;
    }

    public boolean hasTraining() {
        return training != null;
    }
}
