package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.MigReading;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One GPU's latest values, one slot per {@link GpuField}. The fleet writes under its lock; a scrape
 * reads any time without a lock (each value is published on its own, as Prometheus expects: a
 * scrape is never an atomic snapshot of a GPU). Nothing is allocated per sample.
 */
public final class GpuSeries {

    private final String nodeId;
    private final int index;
    private final GpuLabels labels;
    private final AtomicLongArray values = new AtomicLongArray(GpuField.all().length);
    /** Bit i set: field i has a series. Guarded by the fleet's lock. */
    private long present;
    /** The host's sample number in which this GPU was last reported. Guarded by the fleet's lock. */
    private long seenInSample;
    /** The GPU's MIG instances that have series, by GPU instance id. Guarded by the fleet's lock. */
    private final Map<Integer, GpuSeries> migInstances = new HashMap<>(0);
    /** Counts updates, so a MIG instance missing from the latest reading is found. */
    private long updates;

    GpuSeries(String nodeId, int index, GpuLabels labels) {
        this.nodeId = nodeId;
        this.index = index;
        this.labels = labels;
        for (int i = 0; i < values.length(); i++) {
            values.set(i, Double.doubleToRawLongBits(GpuField.ABSENT));
        }
    }

    /** The host (its nodeId) that reports this GPU. */
    public String nodeId() {
        return nodeId;
    }

    public GpuLabels labels() {
        return labels;
    }

    /** The field's latest value; NaN when the GPU has no series for it. */
    public double value(GpuField field) {
        return Double.longBitsToDouble(values.get(field.ordinal()));
    }

    /** Whether the field currently has a series. */
    public boolean has(GpuField field) {
        return (present & bit(field)) != 0;
    }

    /** Whether a reading still carries this GPU's labels (as clipped); allocates nothing for short values. */
    boolean sameLabels(String hostname, GpuReading reading, String fallbackPciBusId) {
        return index == reading.index()
                && labels.hostname().equals(GpuLabels.clip(hostname))
                && labels.uuid().equals(GpuLabels.clip(reading.uuid()))
                && labels.modelName().equals(GpuLabels.clip(reading.model()))
                && labels.pciBusId().equals(GpuLabels.clip(GpuLabels.pciBusId(reading, fallbackPciBusId)));
    }

    /** The series of this GPU's MIG instance, if it has any. */
    public java.util.Optional<GpuSeries> migInstance(int gpuInstanceId) {
        return java.util.Optional.ofNullable(migInstances.get(gpuInstanceId));
    }

    /**
     * Stores a reading's values, and its MIG instances' (each a child with the GPU's labels plus
     * GPU_I_PROFILE and GPU_I_ID), and tells the listener which series appeared or disappeared.
     */
    void update(GpuReading reading, SeriesListener listener, DropListener drops) {
        store(reading, null, listener, drops);
        if (reading.migInstances().isEmpty() && migInstances.isEmpty()) {
            return;
        }
        long stamp = ++updates;
        for (MigReading mig : reading.migInstances()) {
            GpuSeries instance = migInstances.get(mig.gpuInstanceId());
            if (instance != null && !instance.labels.migProfile().equals(mig.profile())) {
                // Repartitioned: the same instance id now has another profile, so another identity.
                instance.removeAll(listener);
                instance = null;
            }
            if (instance == null) {
                instance = new GpuSeries(nodeId, index, labels.forMigInstance(mig.profile(), mig.gpuInstanceId()));
                migInstances.put(mig.gpuInstanceId(), instance);
            }
            instance.store(null, mig, listener, drops);
            instance.updates = stamp;
        }
        for (Iterator<GpuSeries> it = migInstances.values().iterator(); it.hasNext(); ) {
            GpuSeries instance = it.next();
            if (instance.updates != stamp) {
                instance.removeAll(listener);
                it.remove();
            }
        }
    }

    private void store(GpuReading reading, MigReading mig, SeriesListener listener, DropListener drops) {
        for (GpuField field : GpuField.all()) {
            double value = reading != null ? field.read(reading) : field.read(mig);
            if (!GpuField.isAbsent(value) && !field.isPlausible(value)) {
                // A broken reading is no reading: the series goes rather than show an absurd value.
                drops.dropped(DropReason.IMPLAUSIBLE_VALUE, field.metricName());
                value = GpuField.ABSENT;
            }
            // A new series is registered after its value is stored (the registration publishes it),
            // so its first scrape never reads NaN.
            values.lazySet(field.ordinal(), Double.doubleToRawLongBits(value));
            boolean had = has(field);
            if (GpuField.isAbsent(value) && had) {
                present &= ~bit(field);
                listener.seriesRemoved(this, field);
            } else if (!GpuField.isAbsent(value) && !had) {
                present |= bit(field);
                listener.seriesAdded(this, field);
            }
        }
    }

    /** Removes every series of this GPU and of its MIG instances. */
    void removeAll(SeriesListener listener) {
        for (GpuSeries instance : migInstances.values()) {
            instance.removeAll(listener);
        }
        migInstances.clear();
        for (GpuField field : GpuField.all()) {
            if (has(field)) {
                present &= ~bit(field);
                listener.seriesRemoved(this, field);
            }
        }
    }

    void markSeen(long sample) {
        seenInSample = sample;
    }

    boolean wasSeenIn(long sample) {
        return seenInSample == sample;
    }

    private static long bit(GpuField field) {
        return 1L << field.ordinal();
    }

    @Override
    public String toString() {
        return "GpuSeries[" + nodeId + "/" + labels.uuid() + "]";
    }
}
