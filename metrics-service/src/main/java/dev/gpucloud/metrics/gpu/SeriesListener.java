package dev.gpucloud.metrics.gpu;

/**
 * Told when a GPU's series comes into being or goes away, so an exporter can register or remove it.
 * Called only when the set of series changes, never for a mere new value, and always under the
 * fleet's lock: one call at a time, in order.
 */
public interface SeriesListener {

    void seriesAdded(GpuSeries gpu, GpuField field);

    void seriesRemoved(GpuSeries gpu, GpuField field);

    /** A listener that ignores every change. */
    SeriesListener NONE = new SeriesListener() {
        @Override
        public void seriesAdded(GpuSeries gpu, GpuField field) {
        }

        @Override
        public void seriesRemoved(GpuSeries gpu, GpuField field) {
        }
    };
}
