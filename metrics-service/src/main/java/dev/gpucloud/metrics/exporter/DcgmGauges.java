package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.gpu.GpuField;
import dev.gpucloud.metrics.gpu.GpuLabels;
import dev.gpucloud.metrics.gpu.GpuSeries;
import dev.gpucloud.metrics.gpu.SeriesListener;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Binds each GPU series to a Micrometer gauge named and labelled as dcgm-exporter does. A gauge
 * reads the GPU's latest value at scrape time; nothing here runs for a sample that only changes
 * values. Every dcgm field is a gauge, including DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (a counter in
 * dcgm-exporter): Prometheus counters get a {@code _total} suffix, which would change the name.
 */
public final class DcgmGauges implements SeriesListener {

    private final MeterRegistry registry;
    /** The gauges of each GPU, by field ordinal; calls come one at a time under the fleet's lock. */
    private final Map<GpuSeries, Gauge[]> gauges = new ConcurrentHashMap<>();

    public DcgmGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void seriesAdded(GpuSeries gpu, GpuField field) {
        Gauge gauge = Gauge.builder(field.metricName(), gpu, g -> g.value(field))
                .description(field.help())
                .tags(tags(gpu.labels()))
                .strongReference(true)
                .register(registry);
        gauges.computeIfAbsent(gpu, g -> new Gauge[GpuField.values().length])[field.ordinal()] = gauge;
    }

    @Override
    public void seriesRemoved(GpuSeries gpu, GpuField field) {
        Gauge[] ofGpu = gauges.get(gpu);
        if (ofGpu == null || ofGpu[field.ordinal()] == null) {
            return;
        }
        registry.remove(ofGpu[field.ordinal()]);
        ofGpu[field.ordinal()] = null;
        if (isEmpty(ofGpu)) {
            gauges.remove(gpu);
        }
    }

    /** How many series this binder has registered. */
    public int seriesCount() {
        int count = 0;
        for (Gauge[] ofGpu : gauges.values()) {
            for (Gauge gauge : ofGpu) {
                count += gauge == null ? 0 : 1;
            }
        }
        return count;
    }

    static Tags tags(GpuLabels labels) {
        return Tags.of(
                GpuLabels.GPU, labels.gpu(),
                GpuLabels.UUID, labels.uuid(),
                GpuLabels.DEVICE, labels.device(),
                GpuLabels.MODEL_NAME, labels.modelName(),
                GpuLabels.HOSTNAME, labels.hostname(),
                GpuLabels.PCI_BUS_ID, labels.pciBusId());
    }

    private static boolean isEmpty(Gauge[] ofGpu) {
        for (Gauge gauge : ofGpu) {
            if (gauge != null) {
                return false;
            }
        }
        return true;
    }
}
