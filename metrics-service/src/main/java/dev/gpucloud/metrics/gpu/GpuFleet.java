package dev.gpucloud.metrics.gpu;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every host's GPU series, folded from the inventory and telemetry streams. A host's series are
 * the GPUs of its latest sample: a GPU missing from a newer sample loses its series, a sample that
 * is not newer than the latest one applied changes nothing, and a host that leaves (a tombstone) or
 * goes quiet for longer than the stale-after period loses all of its series.
 *
 * <p>Mutations are serialised by one lock, taken for microseconds per sample; scrapes never take
 * it (they read {@link GpuSeries} values directly). Times are passed in, so the rules are testable.
 */
public final class GpuFleet {

    /** What applying a telemetry sample did. */
    public enum SampleOutcome {
        /** The sample's values are exported. */
        APPLIED,
        /** Applied, and the host had no series before: it (re)started reporting. */
        HOST_STARTED_REPORTING,
        /** Ignored: not newer than the latest sample applied for this host (a repeat, or late). */
        NOT_NEWER,
        /** Ignored: taken before the host left the fleet, so it must not bring the host back. */
        BEFORE_DEPARTURE,
        /** Ignored by the {@link SampleRules}: dated too far ahead or back, or of a host not in the inventory. */
        NOT_BELIEVED
    }

    /** What an inventory record did. */
    public enum HostChange {
        /** The host was not described before (new, or back after it left). */
        APPEARED,
        /** A new description of a host already known. */
        UPDATED
    }

    /** What a host's departure removed; {@code wasKnown} is false for a tombstone of a host never seen. */
    public record Departure(boolean wasKnown, int gpusRemoved) {
    }

    private final SeriesListener listener;
    private final DropListener drops;
    private final int maxGpusPerHost;
    private final int maxGpus;
    private final SampleRules rules;
    private final Map<String, Host> hosts = new HashMap<>();
    private final Map<String, GpuSeries> gpusByUuid = new HashMap<>();

    /**
     * @param maxGpusPerHost a sample that lists more GPUs is rejected
     * @param maxGpus a sample that would take the fleet above this many GPU series sets is rejected,
     *     which bounds the scrape whatever a producer sends
     */
    public GpuFleet(SeriesListener listener, int maxGpusPerHost, int maxGpus) {
        this(listener, DropListener.NONE, maxGpusPerHost, maxGpus);
    }

    /** A fleet that also reports every dropped reading, GPU or sample to {@code drops}. */
    public GpuFleet(SeriesListener listener, DropListener drops, int maxGpusPerHost, int maxGpus) {
        this(listener, drops, maxGpusPerHost, maxGpus, SampleRules.TRUSTING);
    }

    /** A fleet that also drops (and counts) the samples {@code rules} do not believe. */
    public GpuFleet(SeriesListener listener, DropListener drops, int maxGpusPerHost, int maxGpus, SampleRules rules) {
        if (maxGpusPerHost < 1 || maxGpus < 1) {
            throw new IllegalArgumentException("limits must be at least 1: maxGpusPerHost=" + maxGpusPerHost
                    + ", maxGpus=" + maxGpus);
        }
        this.listener = listener;
        this.drops = drops;
        this.maxGpusPerHost = maxGpusPerHost;
        this.maxGpus = maxGpus;
        this.rules = rules;
    }

    /** A host's description: remembered for the PCI bus ids that telemetry may lack. */
    public synchronized HostChange describe(HostInventory inventory, Instant receivedAt) {
        Host host = hosts.computeIfAbsent(inventory.nodeId(), Host::new);
        boolean appeared = !host.described;
        host.described = true;
        Map<String, String> pciByUuid = new HashMap<>();
        Set<String> uuids = new HashSet<>();
        for (GpuDevice device : inventory.gpus()) {
            uuids.add(device.uuid());
            if (device.pciBusId() != null && !device.pciBusId().isBlank()) {
                pciByUuid.put(device.uuid(), device.pciBusId());
            }
        }
        host.pciByUuid = pciByUuid;
        host.inventoryUuids = uuids;
        // A description after a tombstone of the same key means the host is back.
        host.leftAt = null;
        host.lastHeardAt = receivedAt;
        return appeared ? HostChange.APPEARED : HostChange.UPDATED;
    }

    /**
     * The host left (a tombstone): all of its series go, and samples taken up to {@code leftAt} that
     * arrive late are ignored rather than bringing it back.
     */
    public synchronized Departure leave(String nodeId, Instant leftAt, Instant receivedAt) {
        Host host = hosts.get(nodeId);
        boolean known = host != null && (host.described || !host.gpus.isEmpty());
        if (host == null) {
            host = new Host(nodeId);
            hosts.put(nodeId, host);
        }
        int removed = host.gpus.size();
        removeAllSeries(host);
        host.described = false;
        host.pciByUuid = Map.of();
        host.inventoryUuids = Set.of();
        host.leftAt = host.leftAt == null || leftAt.isAfter(host.leftAt) ? leftAt : host.leftAt;
        host.lastHeardAt = receivedAt;
        return new Departure(known, removed);
    }

    /**
     * Applies one sample of a host's GPUs. A sample that breaks a limit or lists a GPU twice is an
     * {@link IllegalArgumentException} that names the field, and changes nothing.
     */
    public synchronized SampleOutcome apply(TelemetrySample sample, Instant receivedAt) {
        Host host = hosts.get(sample.nodeId());
        if (sample.sampledAt().isAfter(receivedAt.plus(rules.maxAhead()))) {
            drops.dropped(DropReason.FUTURE_SAMPLE, DropListener.SAMPLE);
            return SampleOutcome.NOT_BELIEVED;
        }
        if (sample.sampledAt().isBefore(receivedAt.minus(rules.maxAge()))) {
            drops.dropped(DropReason.OLD_SAMPLE, DropListener.SAMPLE);
            return SampleOutcome.NOT_BELIEVED;
        }
        if (rules.requireInventory() && (host == null || !host.described)) {
            drops.dropped(DropReason.UNKNOWN_HOST, DropListener.SAMPLE);
            return SampleOutcome.NOT_BELIEVED;
        }
        if (host != null) {
            if (host.leftAt != null && !sample.sampledAt().isAfter(host.leftAt)) {
                drops.dropped(DropReason.STALE_SAMPLE, DropListener.SAMPLE);
                return SampleOutcome.BEFORE_DEPARTURE;
            }
            if (host.lastSampledAt != null && !sample.sampledAt().isAfter(host.lastSampledAt)) {
                drops.dropped(DropReason.STALE_SAMPLE, DropListener.SAMPLE);
                return SampleOutcome.NOT_NEWER;
            }
        }
        check(sample, host);
        if (host == null) {
            host = new Host(sample.nodeId());
            hosts.put(sample.nodeId(), host);
        }
        host.leftAt = null;
        boolean wasReporting = !host.gpus.isEmpty();
        long sampleNumber = ++host.samples;
        for (GpuReading reading : sample.gpus()) {
            if (isUnknown(host, reading)) {
                drops.dropped(DropReason.UNKNOWN_GPU, DropListener.GPU);
                continue;
            }
            String fallbackPci = host.pciByUuid.get(reading.uuid());
            GpuSeries gpu = gpusByUuid.get(reading.uuid());
            if (gpu != null && (!gpu.nodeId().equals(host.nodeId)
                    || !gpu.sameLabels(sample.hostname(), reading, fallbackPci))) {
                // The GPU moved to another host, or a label changed: its old series must go first.
                forget(gpu);
                gpu = null;
            }
            if (gpu == null) {
                gpu = new GpuSeries(host.nodeId, reading.index(), GpuLabels.of(sample.hostname(), reading, fallbackPci));
                gpusByUuid.put(reading.uuid(), gpu);
                host.gpus.put(reading.uuid(), gpu);
            }
            gpu.update(reading, listener, drops);
            gpu.markSeen(sampleNumber);
        }
        for (Iterator<GpuSeries> it = host.gpus.values().iterator(); it.hasNext(); ) {
            GpuSeries gpu = it.next();
            if (!gpu.wasSeenIn(sampleNumber)) {
                it.remove();
                gpusByUuid.remove(gpu.labels().uuid());
                gpu.removeAll(listener);
            }
        }
        host.lastSampledAt = sample.sampledAt();
        host.lastTelemetryAt = receivedAt;
        host.lastHeardAt = receivedAt;
        return wasReporting || host.gpus.isEmpty() ? SampleOutcome.APPLIED : SampleOutcome.HOST_STARTED_REPORTING;
    }

    /**
     * Removes the series of every host whose latest telemetry arrived {@code staleAfter} or longer
     * before {@code now}, and forgets departed or silent hosts after the same period. Returns the
     * nodeIds whose series were removed.
     */
    public synchronized List<String> expire(Instant now, Duration staleAfter) {
        List<String> expired = new ArrayList<>();
        for (Iterator<Host> it = hosts.values().iterator(); it.hasNext(); ) {
            Host host = it.next();
            if (!host.gpus.isEmpty() && !now.isBefore(host.lastTelemetryAt.plus(staleAfter))) {
                removeAllSeries(host);
                expired.add(host.nodeId);
            }
            if (host.gpus.isEmpty() && !host.described && !now.isBefore(host.lastHeardAt.plus(staleAfter))) {
                it.remove();
            }
        }
        return expired;
    }

    /** The GPU with this UUID, if it has series. */
    public synchronized Optional<GpuSeries> gpu(String uuid) {
        return Optional.ofNullable(gpusByUuid.get(uuid));
    }

    /** The GPUs of a host that have series, in no particular order. */
    public synchronized List<GpuSeries> gpusOf(String nodeId) {
        Host host = hosts.get(nodeId);
        return host == null ? List.of() : List.copyOf(host.gpus.values());
    }

    /** The most GPUs that may have series at once (the series cap). */
    public int maxGpus() {
        return maxGpus;
    }

    /** How many GPUs have series. */
    public synchronized int gpuCount() {
        return gpusByUuid.size();
    }

    /** Whether an inventory record describes this host and it has not left since. */
    public synchronized boolean isDescribed(String nodeId) {
        Host host = hosts.get(nodeId);
        return host != null && host.described;
    }

    /** The host's inventory is known and does not list this GPU: a made-up or misreported UUID. */
    private static boolean isUnknown(Host host, GpuReading reading) {
        return host.described && !host.inventoryUuids.contains(reading.uuid());
    }

    private void check(TelemetrySample sample, Host host) {
        List<GpuReading> readings = sample.gpus();
        if (readings.size() > maxGpusPerHost) {
            drops.dropped(DropReason.GPUS_PER_HOST, DropListener.SAMPLE);
            throw new IllegalArgumentException("field 'gpus' lists " + readings.size()
                    + " GPUs, over the limit of " + maxGpusPerHost + " per host");
        }
        int added = 0;
        for (int i = 0; i < readings.size(); i++) {
            GpuReading reading = readings.get(i);
            for (int j = 0; j < i; j++) {
                if (readings.get(j).uuid().equals(reading.uuid())) {
                    throw new IllegalArgumentException("field 'gpus' lists uuid " + reading.uuid() + " twice");
                }
                if (readings.get(j).index() == reading.index()) {
                    throw new IllegalArgumentException("field 'gpus' lists index " + reading.index() + " twice");
                }
            }
            if (!gpusByUuid.containsKey(reading.uuid()) && (host == null || !isUnknown(host, reading))) {
                added++;
            }
        }
        if (added > 0 && gpusByUuid.size() + added > maxGpus) {
            drops.dropped(DropReason.SERIES_CAP, DropListener.SAMPLE);
            throw new IllegalArgumentException("field 'gpus' adds " + added + " GPUs to the " + gpusByUuid.size()
                    + " already exported, over the limit of " + maxGpus);
        }
    }

    private void forget(GpuSeries gpu) {
        Host owner = hosts.get(gpu.nodeId());
        if (owner != null) {
            owner.gpus.remove(gpu.labels().uuid());
        }
        gpusByUuid.remove(gpu.labels().uuid());
        gpu.removeAll(listener);
    }

    private void removeAllSeries(Host host) {
        for (GpuSeries gpu : host.gpus.values()) {
            gpusByUuid.remove(gpu.labels().uuid());
            gpu.removeAll(listener);
        }
        host.gpus.clear();
    }

    /** One host as the fleet knows it; guarded by the fleet's lock. */
    private static final class Host {
        final String nodeId;
        final Map<String, GpuSeries> gpus = new HashMap<>();
        Map<String, String> pciByUuid = Map.of();
        Set<String> inventoryUuids = Set.of();
        boolean described;
        Instant leftAt;
        Instant lastSampledAt;
        Instant lastTelemetryAt;
        Instant lastHeardAt;
        long samples;

        Host(String nodeId) {
            this.nodeId = nodeId;
        }
    }
}
