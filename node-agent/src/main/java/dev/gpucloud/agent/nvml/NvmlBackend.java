package dev.gpucloud.agent.nvml;

import com.sun.jna.Pointer;
import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.MigReading;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.function.Supplier;

/**
 * The one real host an agent runs on, read through NVML. A GPU whose name, UUID, bus id or memory
 * cannot be read, or that answers NVML_ERROR_GPU_IS_LOST to any call, is left out of that answer
 * and a fault is recorded; a reading the GPU does not support is null. Neither method throws.
 */
public final class NvmlBackend implements GpuBackend, AutoCloseable {

    private static final long MIB = 1024L * 1024L;

    private final Nvml nvml;
    private final HostFacts host;
    private final Clock clock;
    private final FaultLog faults = new FaultLog();

    public NvmlBackend(Nvml nvml, HostFacts host, Clock clock) {
        this.nvml = nvml;
        this.host = host;
        this.clock = clock;
    }

    @Override
    public String name() {
        return "nvml";
    }

    /** The faults recorded lately, oldest first. */
    public List<GpuFault> faults() {
        return faults.recent();
    }

    @Override
    public synchronized List<HostInventory> inventory() {
        Instant now = clock.instant();
        List<GpuDevice> gpus = new ArrayList<>();
        Map<Integer, String> busIds = new LinkedHashMap<>();
        Map<Integer, List<String>> links = new LinkedHashMap<>();
        Map<Integer, Described> described = new LinkedHashMap<>();
        for (int index = 0; index < deviceCount(now); index++) {
            try {
                Pointer device = nvml.handle(index);
                Described gpu = describe(index, device, now);
                described.put(index, gpu);
                busIds.put(index, gpu.busId);
                links.put(index, activeLinks(index, device, now));
                faults.clear(index, now);
            } catch (NvmlException | IllegalArgumentException e) {
                faults.record(now, index, e.getMessage());
            }
        }
        SortedMap<Integer, Integer> islands = NvlinkIslands.of(busIds, links);
        described.forEach((index, gpu) -> gpus.add(new GpuDevice(index, gpu.uuid, gpu.model, gpu.memoryMib, gpu.busId,
                islands.get(index), gpu.migEnabled, gpu.migInstances)));
        return List.of(new HostInventory(host.nodeId(), host.hostname(), host.instanceType(), host.zone(),
                host.capacityType(), host.priceMicrosPerHour(), host.cpuMillis(), host.memoryMib(), host.rdmaFabric(),
                host.switchPath(), gpus, List.of(), name(), now));
    }

    @Override
    public synchronized List<TelemetrySample> sample() {
        Instant now = clock.instant();
        List<GpuReading> readings = new ArrayList<>();
        for (int index = 0; index < deviceCount(now); index++) {
            try {
                readings.add(read(index, nvml.handle(index), now));
                faults.clear(index, now);
            } catch (NvmlException | IllegalArgumentException e) {
                faults.record(now, index, e.getMessage());
            }
        }
        return List.of(new TelemetrySample(host.nodeId(), host.hostname(), now, readings));
    }

    /** An XID critical error NVML reported for GPU {@code gpuIndex} (-1 when the device is not one of ours). */
    public record XidEvent(int gpuIndex, long xid, Instant seenAt) {
    }

    private Pointer eventSet;
    private boolean eventsUnavailable;
    private final Map<Integer, Integer> lastXid = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The XID critical errors that arrived since the last call (at most 100), from an NVML event set
     * registered on every GPU on first use. A driver without event support is recorded as a fault
     * once and then left alone.
     */
    public synchronized List<XidEvent> pollXids() {
        Instant now = clock.instant();
        List<XidEvent> out = new ArrayList<>();
        if (eventsUnavailable) {
            return out;
        }
        List<Pointer> handles = new ArrayList<>();
        try {
            int count = nvml.deviceCount();
            for (int index = 0; index < count; index++) {
                handles.add(nvml.handle(index));
            }
            if (eventSet == null) {
                eventSet = nvml.eventSetCreate();
                for (int index = 0; index < handles.size(); index++) {
                    try {
                        nvml.registerEvents(handles.get(index), Nvml.EVENT_XID_CRITICAL_ERROR, eventSet);
                    } catch (NvmlException e) {
                        faults.record(now, index, "XID events not watched: " + e.getMessage());
                    }
                }
            }
            for (int i = 0; i < 100; i++) {
                Nvml.Event event = nvml.eventSetWait(eventSet, 0);
                if (event == null) {
                    break;
                }
                if ((event.type() & Nvml.EVENT_XID_CRITICAL_ERROR) == 0) {
                    continue;
                }
                int index = handles.indexOf(event.device());
                if (index >= 0) {
                    lastXid.put(index, (int) event.data());
                }
                out.add(new XidEvent(index, event.data(), now));
            }
        } catch (NvmlException e) {
            if (eventSet == null) {
                eventsUnavailable = true;
            }
            faults.record(now, -1, "XID events: " + e.getMessage());
        }
        return out;
    }

    /** nvmlShutdown. */
    @Override
    public synchronized void close() {
        if (eventSet != null) {
            try {
                nvml.eventSetFree(eventSet);
            } catch (NvmlException e) {
                // shutting down anyway
            }
            eventSet = null;
        }
        nvml.close();
    }

    private int deviceCount(Instant now) {
        try {
            int count = nvml.deviceCount();
            faults.clear(-1, now);
            return count;
        } catch (NvmlException e) {
            faults.record(now, -1, e.getMessage());
            return 0;
        }
    }

    private Described describe(int index, Pointer device, Instant now) {
        Described gpu = new Described();
        gpu.uuid = nvml.uuid(device);
        gpu.model = nvml.name(device);
        gpu.busId = nvml.pciBusId(device);
        gpu.memoryMib = nvml.memory(device).total() / MIB;
        gpu.migEnabled = Boolean.TRUE.equals(optional(() -> nvml.migEnabled(device), index, now));
        gpu.migInstances = new ArrayList<>();
        if (gpu.migEnabled) {
            for (MigDevice mig : migDevices(index, device, now)) {
                Long memoryMib = optional(() -> nvml.memory(mig.handle).total() / MIB, index, now);
                if (memoryMib != null && memoryMib >= 1) {
                    gpu.migInstances.add(new MigInstance(mig.gpuInstanceId, mig.profile, mig.uuid, memoryMib));
                }
            }
        }
        return gpu;
    }

    private GpuReading read(int index, Pointer device, Instant now) {
        String uuid = nvml.uuid(device);
        String model = nvml.name(device);
        String busId = nvml.pciBusId(device);
        Nvml.MemoryInfo memory = nvml.memory(device);
        Nvml.Utilization util = optional(() -> nvml.utilization(device), index, now);
        Integer powerMw = optional(() -> nvml.powerMilliwatts(device), index, now);
        boolean migEnabled = Boolean.TRUE.equals(optional(() -> nvml.migEnabled(device), index, now));
        List<MigReading> migs = new ArrayList<>();
        if (migEnabled) {
            for (MigDevice mig : migDevices(index, device, now)) {
                Long usedMib = optional(() -> nvml.memory(mig.handle).used() / MIB, index, now);
                if (usedMib != null) {
                    migs.add(new MigReading(mig.gpuInstanceId, mig.profile, mig.uuid, usedMib, null));
                }
            }
        }
        return new GpuReading(index, uuid, model, busId,
                util == null ? 0.0 : Math.min(100, Math.max(0, util.gpu())),
                util == null ? null : (double) util.memory(),
                memory.used() / MIB,
                memory.free() / MIB,
                powerMw == null ? null : powerMw / 1000.0,
                optional(() -> nvml.energyMillijoules(device), index, now),
                optional(() -> nvml.temperature(device), index, now),
                null,
                optional(() -> nvml.clockMhz(device, NvmlLayout.CLOCK_SM), index, now),
                optional(() -> nvml.clockMhz(device, NvmlLayout.CLOCK_MEM), index, now),
                optional(() -> nvml.eccErrors(device, NvmlLayout.ECC_CORRECTED), index, now),
                optional(() -> nvml.eccErrors(device, NvmlLayout.ECC_UNCORRECTED), index, now),
                lastXid.get(index), null, null, null, null,
                migs);
    }

    /** The GPU's MIG devices; one that cannot be read is left out with a fault, unless the whole GPU is gone. */
    private List<MigDevice> migDevices(int index, Pointer device, Instant now) {
        List<MigDevice> migs = new ArrayList<>();
        Integer slots = optional(() -> nvml.maxMigDevices(device), index, now);
        for (int slot = 0; slot < (slots == null ? 0 : slots); slot++) {
            int s = slot;
            Optional<MigDevice> mig = Optional.ofNullable(optional(() -> nvml.migDevice(device, s).map(handle ->
                    new MigDevice(handle, nvml.gpuInstanceId(handle), profile(nvml.name(handle)), nvml.uuid(handle)))
                    .orElse(null), index, now));
            mig.ifPresent(migs::add);
        }
        return migs;
    }

    /** The MIG profile from a MIG device's name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb" gives "3g.40gb". */
    static String profile(String migDeviceName) {
        int at = migDeviceName.lastIndexOf(" MIG ");
        String profile = at < 0 ? migDeviceName : migDeviceName.substring(at + 5).strip();
        return profile.isBlank() ? "unknown" : profile;
    }

    private List<String> activeLinks(int index, Pointer device, Instant now) {
        List<String> remotes = new ArrayList<>();
        for (int link = 0; link < NvmlLayout.NVLINK_MAX_LINKS; link++) {
            try {
                if (nvml.nvlinkActive(device, link)) {
                    remotes.add(nvml.nvlinkRemoteBusId(device, link));
                }
            } catch (NvmlException e) {
                if (e.gpuGone()) {
                    throw e;
                }
                if (e.notAvailable()) {
                    break; // no NVLink on this GPU
                }
                // INVALID_ARGUMENT: this GPU has fewer links than the maximum; the next may still exist.
            }
        }
        return remotes;
    }

    /** A reading the GPU may not have: null when not supported; a lost GPU propagates; other errors are faults. */
    private <T> T optional(Supplier<T> reading, int index, Instant now) {
        try {
            return reading.get();
        } catch (NvmlException e) {
            if (e.gpuGone()) {
                throw e;
            }
            if (!e.notAvailable() && now != null) {
                faults.record(now, index, e.getMessage());
            }
            return null;
        }
    }

    private record MigDevice(Pointer handle, int gpuInstanceId, String profile, String uuid) {
    }

    private static final class Described {
        String uuid;
        String model;
        String busId;
        long memoryMib;
        boolean migEnabled;
        List<MigInstance> migInstances;
    }
}
