package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.gpu.DropListener;
import dev.gpucloud.metrics.gpu.DropReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts dropped telemetry as {@code gpucloud_metrics_telemetry_dropped_total{reason, what}}: what
 * is a dcgm series name for one implausible reading, {@code gpu} or {@code sample} otherwise. Both
 * labels come from closed sets (the reasons and the dcgm fields), so the counter cannot explode.
 */
public final class TelemetryDrops implements DropListener {

    public static final String NAME = "gpucloud.metrics.telemetry.dropped";

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public TelemetryDrops(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void dropped(DropReason reason, String what) {
        counters.computeIfAbsent(reason.label() + "/" + what, k -> Counter.builder(NAME)
                .description("Telemetry that did not become series, by reason and by what was dropped.")
                .tags("reason", reason.label(), "what", what)
                .register(registry)).increment();
    }
}
