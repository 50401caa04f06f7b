package dev.gpucloud.metrics.platform;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.NodeEventType;
import java.time.Duration;

/**
 * The countable things that happen on the platform, told as they are folded, so that an exporter can
 * count them (counters, histograms). Current levels (jobs by state, GPUs allocated) are read from
 * {@link PlatformState} instead. Called one at a time, under the state's lock.
 */
public interface PlatformSignals {

    /** A job left PENDING for SCHEDULED after waiting this long. */
    void queued(String tenant, Duration wait);

    /** A job was placed (PENDING to SCHEDULED). */
    void placed(String tenant);

    /** A job that held GPUs went back to PENDING; {@code lostGpuSeconds} is the work since its last checkpoint. */
    void interrupted(String tenant, InterruptionCause cause, double lostGpuSeconds);

    /** A job reached a final state. */
    void finished(String tenant, JobState state);

    /** Something happened to a host; {@code capacityType} is null when the host is not known. */
    void nodeEvent(NodeEventType type, CapacityType capacityType);

    /** An allocation was lost on its host. */
    void allocationLost();

    /** Usage was reported, counted once even when reports repeat or overlap. */
    void used(String tenant, CapacityType capacityType, double gpuSeconds);

    /** An advisory was raised about an allocation. */
    void advised(Advisory advisory);

    /** Ignores every signal. */
    PlatformSignals NONE = new PlatformSignals() {
        @Override
        public void queued(String tenant, Duration wait) {
        }

        @Override
        public void placed(String tenant) {
        }

        @Override
        public void interrupted(String tenant, InterruptionCause cause, double lostGpuSeconds) {
        }

        @Override
        public void finished(String tenant, JobState state) {
        }

        @Override
        public void nodeEvent(NodeEventType type, CapacityType capacityType) {
        }

        @Override
        public void allocationLost() {
        }

        @Override
        public void used(String tenant, CapacityType capacityType, double gpuSeconds) {
        }

        @Override
        public void advised(Advisory advisory) {
        }
    };
}
