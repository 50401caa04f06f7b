package dev.gpucloud.metrics.gpu;

/**
 * Told whenever telemetry is dropped, with the reason and what was dropped ({@code field}: the dcgm
 * series name for one reading, {@code "sample"} or {@code "gpu"} for more), so an exporter can count it.
 * Called under the fleet's lock.
 */
@FunctionalInterface
public interface DropListener {

    /** What is dropped when the whole sample is. */
    String SAMPLE = "sample";
    /** What is dropped when one GPU's readings are. */
    String GPU = "gpu";

    void dropped(DropReason reason, String what);

    /** A listener that ignores every drop. */
    DropListener NONE = (reason, what) -> {
    };
}
