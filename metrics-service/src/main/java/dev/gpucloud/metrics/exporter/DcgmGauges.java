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
import java.util.concurrent.atomic.AtomicInteger;

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
    private final AtomicInteger series = new AtomicInteger();

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
        series.incrementAndGet();
    }

    @Override
    public void seriesRemoved(GpuSeries gpu, GpuField field) {
        Gauge[] ofGpu = gauges.get(gpu);
        if (ofGpu == null || ofGpu[field.ordinal()] == null) {
            return;
        }
        registry.remove(ofGpu[field.ordinal()]);
        ofGpu[field.ordinal()] = null;
        series.decrementAndGet();
        if (isEmpty(ofGpu)) {
            gauges.remove(gpu);
        }
    }

    /** How many series this binder has registered; kept as a count, so reading it costs nothing at scrape time. */
    public int seriesCount() {
        return series.get();
    }

    static Tags tags(GpuLabels labels) {
        return Tags.of(
                GpuLabels.GPU, labels.gpu(),
                GpuLabels.UUID, labels.uuid(),
                GpuLabels.DEVICE, labels.device(),
                GpuLabels.MODEL_NAME, labels.modelName(),
                GpuLabels.HOSTNAME, labels.hostname(),
                GpuLabels.HOSTNAME_LOWER, labels.hostname(),
                GpuLabels.PCI_BUS_ID, labels.pciBusId(),
                GpuLabels.GPU_I_PROFILE, labels.migProfile(),
                GpuLabels.GPU_I_ID, labels.migInstanceId());
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
