package dev.gpucloud.scheduler.sim.trace;

import java.util.List;

/**
 * What Muri's traces say about a training job beyond its size and times: the model, batch size,
 * iteration count and per-iteration time (milliseconds), the trace's {@code interval} column
 * (milliseconds), the per-iteration time on each of its resources ({@code resource_time_0..2}, ms,
 * possibly fractional)
 * and its priority.
 */
public record TrainingProfile(
        String modelName,
        int batchSize,
        long iterations,
        long iterationTimeMillis,
        long intervalMillis,
        List<Double> resourceTimesMillis,
        int priority) {

    public TrainingProfile {
        if (modelName == null || modelName.isBlank()) {
            throw new IllegalArgumentException("a training profile names its model");
        }
        if (batchSize < 0 || iterations < 0 || iterationTimeMillis < 0 || intervalMillis < 0) {
            throw new IllegalArgumentException("batch size, iterations and times must be >= 0");
        }
        resourceTimesMillis = List.copyOf(resourceTimesMillis);
    }
}
