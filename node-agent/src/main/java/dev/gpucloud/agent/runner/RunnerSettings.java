package dev.gpucloud.agent.runner;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * How the process runner runs workloads: where their working directories and logs go, how usage
 * is cut, how long a stopped workload has between SIGTERM and SIGKILL, which signal asks for a
 * checkpoint, and how long a checkpoint may take when the command names no deadline.
 */
public record RunnerSettings(
        Path runDir,
        Duration usageInterval,
        Duration stopGrace,
        String checkpointSignal,
        Duration checkpointTimeout) {

    public RunnerSettings {
        if (runDir == null) {
            throw new IllegalArgumentException("run directory must be set");
        }
        if (usageInterval == null || usageInterval.isNegative() || usageInterval.isZero()) {
            throw new IllegalArgumentException("usage interval must be positive, was " + usageInterval);
        }
        if (stopGrace == null || stopGrace.isNegative()) {
            throw new IllegalArgumentException("stop grace must not be negative, was " + stopGrace);
        }
        if (checkpointTimeout == null || checkpointTimeout.isNegative() || checkpointTimeout.isZero()) {
            throw new IllegalArgumentException("checkpoint timeout must be positive, was " + checkpointTimeout);
        }
        checkpointSignal = Signals.normalize(checkpointSignal);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "runDir=%s usage=%s grace=%s signal=SIG%s checkpointTimeout=%s", runDir,
                usageInterval, stopGrace, checkpointSignal, checkpointTimeout);
    }
}
