package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.scheduler.lifecycle.JobRun;
import dev.gpucloud.scheduler.state.SchedulerState.Stop;
import java.util.Objects;

/**
 * A job's row as the scheduler's rules see it: its life ({@link JobRun}: state, attempt, failures,
 * interruptions, checkpoint, lost work), the reason its owner reads, its exit code and its stop request.
 * {@link JobCommands} changes it; the adapter reads it from a stored row and writes it back.
 */
public final class JobRow {

    private final String tenant;
    private final int workers;
    private final JobRun run;
    private String reason;
    private Integer exitCode;
    private Stop stop;

    /**
     * {@code workers} is how many workers each attempt runs (0 when the job's spec cannot be read: such a job
     * can still be cancelled or failed, not settled); {@code stop} is its checkpoint-then-stop request or null.
     */
    public JobRow(String tenant, int workers, JobRun run, String reason, Integer exitCode, Stop stop) {
        this.tenant = tenant;
        this.workers = workers;
        this.run = Objects.requireNonNull(run, "run");
        this.reason = reason == null ? "" : reason;
        this.exitCode = exitCode;
        this.stop = stop;
    }

    public String jobId() {
        return run.jobId();
    }

    public String tenant() {
        return tenant;
    }

    public int workers() {
        return workers;
    }

    public JobRun run() {
        return run;
    }

    public JobState state() {
        return run.state();
    }

    public String reason() {
        return reason;
    }

    public Integer exitCode() {
        return exitCode;
    }

    public Stop stop() {
        return stop;
    }

    void reason(String reason) {
        this.reason = reason;
    }

    void exitCode(Integer exitCode) {
        this.exitCode = exitCode;
    }

    void stop(Stop stop) {
        this.stop = stop;
    }
}
