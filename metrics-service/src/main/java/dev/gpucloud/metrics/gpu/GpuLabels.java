package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.GpuReading;
import java.util.Objects;

/**
 * The labels of one GPU's series, named exactly as dcgm-exporter names them. A GPU is identified by
 * its UUID; when any other label changes (the host was renamed, the GPU moved), its series are
 * replaced, because a label set is a series' identity in Prometheus.
 */
public record GpuLabels(String gpu, String uuid, String device, String modelName, String hostname, String pciBusId,
                        String migProfile, String migInstanceId) {

    public static final String GPU = "gpu";
    public static final String UUID = "UUID";
    public static final String DEVICE = "device";
    public static final String MODEL_NAME = "modelName";
    public static final String HOSTNAME = "Hostname";
    /** The same host name under the lower-case label that newer dcgm-exporter versions also write. */
    public static final String HOSTNAME_LOWER = "hostname";
    public static final String PCI_BUS_ID = "pci_bus_id";
    /** The MIG profile of a MIG instance's series ("1g.10gb"); empty on a whole GPU's. */
    public static final String GPU_I_PROFILE = "GPU_I_PROFILE";
    /** The MIG GPU instance id of a MIG instance's series; empty on a whole GPU's. */
    public static final String GPU_I_ID = "GPU_I_ID";

    /** The longest label value exported; a longer one is cut there (docs/metrics.md). */
    public static final int MAX_VALUE = 128;

    /**
     * Label values are never null: an unknown one is the empty string, which Prometheus treats as absent. Each
     * is clipped to {@link #MAX_VALUE} characters, so no producer can make a scrape carry kilobytes per series.
     */
    public GpuLabels {
        gpu = clip(Objects.requireNonNull(gpu, "gpu"));
        uuid = clip(Objects.requireNonNull(uuid, "uuid"));
        device = clip(Objects.requireNonNull(device, "device"));
        modelName = clip(Objects.requireNonNull(modelName, "modelName"));
        hostname = clip(Objects.requireNonNull(hostname, "hostname"));
        pciBusId = pciBusId == null ? "" : clip(pciBusId);
        migProfile = migProfile == null ? "" : clip(migProfile);
        migInstanceId = migInstanceId == null ? "" : clip(migInstanceId);
    }

    /** A label value cut to {@link #MAX_VALUE} characters (never inside a surrogate pair). */
    static String clip(String value) {
        if (value.length() <= MAX_VALUE) {
            return value;
        }
        int end = Character.isHighSurrogate(value.charAt(MAX_VALUE - 1)) ? MAX_VALUE - 1 : MAX_VALUE;
        return value.substring(0, end);
    }

    /** A whole GPU's labels (no MIG instance). */
    public GpuLabels(String gpu, String uuid, String device, String modelName, String hostname, String pciBusId) {
        this(gpu, uuid, device, modelName, hostname, pciBusId, "", "");
    }

    /** The labels of one MIG instance of this GPU: the GPU's, plus its profile and instance id (dcgm-exporter's way). */
    public GpuLabels forMigInstance(String profile, int gpuInstanceId) {
        return new GpuLabels(gpu, uuid, device, modelName, hostname, pciBusId, profile, String.valueOf(gpuInstanceId));
    }

    /** Whether these are a MIG instance's labels. */
    public boolean isMigInstance() {
        return !migInstanceId.isEmpty();
    }

    /** The labels of a reading from a host, with a PCI bus id from elsewhere when the reading lacks one. */
    public static GpuLabels of(String hostname, GpuReading reading, String fallbackPciBusId) {
        return new GpuLabels(String.valueOf(reading.index()), reading.uuid(), "nvidia" + reading.index(),
                reading.model(), hostname, pciBusId(reading, fallbackPciBusId));
    }

    /** The reading's PCI bus id, else the fallback (from the host's inventory), else the empty string. */
    static String pciBusId(GpuReading reading, String fallback) {
        if (reading.pciBusId() != null && !reading.pciBusId().isBlank()) {
            return reading.pciBusId();
        }
        return fallback == null ? "" : fallback;
    }
}
