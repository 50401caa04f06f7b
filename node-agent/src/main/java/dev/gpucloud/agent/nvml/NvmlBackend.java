package dev.gpucloud.agent.nvml;

import com.sun.jna.Pointer;
import dev.gpucloud.agent.backend.GpuBackend;
import dev.gpucloud.agent.runner.MigProvisioner;
import dev.gpucloud.agent.runner.MigRefusedException;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.geometry.MigProfile;
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
 * Each MIG instance reports its placement (nvmlGpuInstanceGetInfo) and, where the GPU has GPM
 * (Hopper and later), its graphics-engine activity between this sample and the last, as DCGM's
 * DCGM_FI_PROF_GR_ENGINE_ACTIVE does. As a {@link MigProvisioner} it creates and destroys MIG
 * instances for the process runner.
 */
public final class NvmlBackend implements GpuBackend, MigProvisioner, AutoCloseable {

    private static final long MIB = 1024L * 1024L;

    private final Nvml nvml;
    private final HostFacts host;
    private final Clock clock;
    private final FaultLog faults = new FaultLog();
    private static final System.Logger LOG = System.getLogger(NvmlBackend.class.getName());
    /** Per GPU index: whether GPM answers (absent: not asked yet). */
    private final Map<Integer, Boolean> gpm = new java.util.HashMap<>();
    /** Per MIG instance UUID: its last GPM sample, the start of the next reading's interval. */
    private final Map<String, Pointer> gpmSamples = new LinkedHashMap<>();
    private final List<String> notices = new ArrayList<>();

    public NvmlBackend(Nvml nvml, HostFacts host, Clock clock) {
        this.nvml = nvml;
        this.host = host;
        this.clock = clock;
    }

    @Override
    public String name() {
        return "nvml";
    }

    /** Things worth saying once (a GPU without GPM), oldest first; each is also logged. */
    public synchronized List<String> notices() {
        return List.copyOf(notices);
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
        java.util.Set<String> sampled = new java.util.HashSet<>();
        for (int index = 0; index < deviceCount(now); index++) {
            try {
                readings.add(read(index, nvml.handle(index), now, sampled));
                faults.clear(index, now);
            } catch (NvmlException | IllegalArgumentException e) {
                faults.record(now, index, e.getMessage());
            }
        }
        gpmSamples.entrySet().removeIf(e -> {
            if (sampled.contains(e.getKey())) {
                return false;
            }
            freeQuietly(e.getValue()); // the instance is gone, or its GPU did not answer this time
            return true;
        });
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
        gpmSamples.values().forEach(this::freeQuietly);
        gpmSamples.clear();
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
                    gpu.migInstances.add(new MigInstance(mig.gpuInstanceId, mig.profile, mig.uuid, memoryMib,
                            placementStart(device, mig.gpuInstanceId)));
                }
            }
        }
        return gpu;
    }

    private GpuReading read(int index, Pointer device, Instant now, java.util.Set<String> sampled) {
        String uuid = nvml.uuid(device);
        String model = nvml.name(device);
        String busId = nvml.pciBusId(device);
        Nvml.MemoryInfo memory = nvml.memory(device);
        Nvml.Utilization util = optional(() -> nvml.utilization(device), index, now);
        Integer powerMw = optional(() -> nvml.powerMilliwatts(device), index, now);
        boolean migEnabled = Boolean.TRUE.equals(optional(() -> nvml.migEnabled(device), index, now));
        List<MigReading> migs = new ArrayList<>();
        if (migEnabled) {
            boolean withGpm = gpmSupported(index, device, now);
            for (MigDevice mig : migDevices(index, device, now)) {
                Long usedMib = optional(() -> nvml.memory(mig.handle).used() / MIB, index, now);
                if (usedMib != null) {
                    boolean stillGpm = withGpm && Boolean.TRUE.equals(gpm.get(index));
                    Double active = stillGpm ? grEngineActive(index, device, mig, now) : null;
                    if (stillGpm) {
                        sampled.add(mig.uuid);
                    }
                    migs.add(new MigReading(mig.gpuInstanceId, mig.profile, mig.uuid, usedMib, active));
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

    /** Where a GPU instance starts (nvmlGpuInstanceGetInfo's placement); null when NVML will not say. */
    private Integer placementStart(Pointer device, int gpuInstanceId) {
        try {
            int start = nvml.gpuInstanceInfo(nvml.gpuInstanceById(device, gpuInstanceId)).start();
            return start >= 0 && start <= 7 ? start : null;
        } catch (NvmlException e) {
            if (e.gpuGone()) {
                throw e;
            }
            return null; // not supported, not permitted (some drivers want root), or no such instance any more
        }
    }

    /** Whether GPU {@code index} has GPM, asked once; a GPU without it is said once. */
    private boolean gpmSupported(int index, Pointer device, Instant now) {
        Boolean known = gpm.get(index);
        if (known != null) {
            return known;
        }
        String why = null;
        try {
            if (!nvml.gpmSupported(device)) {
                why = "the GPU does not support GPM (it needs Hopper or later)";
            }
        } catch (NvmlException e) {
            if (e.gpuGone()) {
                throw e;
            }
            why = e.getMessage();
        }
        gpm.put(index, why == null);
        if (why != null) {
            notice("GPU " + index + ": no per-MIG engine activity (grEngineActive stays null): " + why);
        }
        return why == null;
    }

    /**
     * The graphics-engine activity of one MIG instance, 0..1, between its previous GPM sample and
     * one taken now (NVML_GPM_METRIC_GRAPHICS_UTIL); null at its first sample, when there is no
     * interval yet, or when NVML cannot say.
     */
    private Double grEngineActive(int index, Pointer device, MigDevice mig, Instant now) {
        Pointer sample;
        try {
            sample = nvml.gpmSampleAlloc();
        } catch (NvmlException e) {
            gpmFailed(index, e, now);
            return null;
        }
        try {
            nvml.gpmMigSample(device, mig.gpuInstanceId, sample);
        } catch (NvmlException e) {
            freeQuietly(sample);
            gpmFailed(index, e, now);
            return null;
        }
        Pointer previous = gpmSamples.put(mig.uuid, sample);
        if (previous == null) {
            return null;
        }
        try {
            double percent = nvml.gpmMetric(previous, sample, NvmlLayout.GPM_METRIC_GRAPHICS_UTIL);
            if (Double.isNaN(percent)) {
                return null;
            }
            return Math.round(Math.min(100, Math.max(0, percent)) * 10) / 1000.0;
        } catch (NvmlException e) {
            gpmFailed(index, e, now);
            return null;
        } finally {
            freeQuietly(previous);
        }
    }

    private void gpmFailed(int index, NvmlException e, Instant now) {
        if (e.gpuGone()) {
            throw e;
        }
        if (e.notAvailable()) {
            if (Boolean.FALSE.equals(gpm.put(index, false))) {
                return; // said already
            }
            notice("GPU " + index + ": no per-MIG engine activity (grEngineActive stays null): " + e.getMessage());
        } else {
            faults.record(now, index, "GPM: " + e.getMessage());
        }
    }

    private void freeQuietly(Pointer sample) {
        try {
            nvml.gpmSampleFree(sample);
        } catch (NvmlException e) {
            // nothing more to do with it
        }
    }

    private void notice(String text) {
        notices.add(text);
        LOG.log(System.Logger.Level.INFO, text);
    }

    /**
     * Creates a GPU instance of {@code profile} at {@code start} and one compute instance spanning
     * it, through NVML, and returns the MIG device that appears. A refusal (NOT_SUPPORTED,
     * NO_PERMISSION without root, INSUFFICIENT_RESOURCES...) is a {@link MigRefusedException} with
     * NVML's code and words; a GPU instance whose compute instance cannot be made is destroyed again.
     */
    @Override
    public synchronized MigInstance create(int gpuIndex, MigProfile profile, int start) {
        Instant now = clock.instant();
        try {
            Pointer device = nvml.handle(gpuIndex);
            Nvml.GpuInstanceProfile giProfile = nvml.gpuInstanceProfile(device, gpuInstanceProfile(profile));
            Pointer gpuInstance = nvml.createGpuInstance(device, giProfile.id(), start, profile.memorySlices());
            try {
                int ciProfile = nvml.computeInstanceProfileId(gpuInstance, computeInstanceProfile(profile.computeSlices()));
                nvml.createComputeInstance(gpuInstance, ciProfile);
                Nvml.GpuInstanceInfo info = nvml.gpuInstanceInfo(gpuInstance);
                for (MigDevice mig : migDevices(gpuIndex, device, now)) {
                    if (mig.gpuInstanceId == info.id()) {
                        long memoryMib = nvml.memory(mig.handle).total() / MIB;
                        return new MigInstance(info.id(), mig.profile, mig.uuid, Math.max(1, memoryMib), info.start());
                    }
                }
                throw new NvmlException("nvmlDeviceGetMigDeviceHandleByIndex", NvmlReturn.ERROR_NOT_FOUND,
                        "no MIG device for the new GPU instance " + info.id());
            } catch (NvmlException e) {
                try {
                    nvml.destroyGpuInstance(gpuInstance);
                } catch (NvmlException ignored) {
                    // the first error is the one to report
                }
                throw e;
            }
        } catch (NvmlException e) {
            throw new MigRefusedException("NVML refused: " + e.getMessage(), e);
        }
    }

    /** Destroys an idle MIG instance: its compute instances, then the GPU instance. */
    @Override
    public synchronized void destroy(int gpuIndex, MigInstance mig) {
        Instant now = clock.instant();
        try {
            Pointer device = nvml.handle(gpuIndex);
            Pointer gpuInstance = nvml.gpuInstanceById(device, mig.gpuInstanceId());
            for (MigDevice d : migDevices(gpuIndex, device, now)) {
                if (d.gpuInstanceId == mig.gpuInstanceId()) {
                    nvml.destroyComputeInstance(nvml.computeInstanceById(gpuInstance, nvml.computeInstanceId(d.handle)));
                }
            }
            nvml.destroyGpuInstance(gpuInstance);
        } catch (NvmlException e) {
            throw new MigRefusedException("NVML refused: " + e.getMessage(), e);
        }
    }

    /** The NVML_GPU_INSTANCE_PROFILE_* value of a profile: by its compute slices, +me and double memory. */
    static int gpuInstanceProfile(MigProfile profile) {
        if (profile.computeSlices() == 1) {
            return profile.mediaExtensions() ? NvmlLayout.GI_PROFILE_1_SLICE_REV1
                    : profile.memorySlices() == 2 ? NvmlLayout.GI_PROFILE_1_SLICE_REV2 : NvmlLayout.GI_PROFILE_1_SLICE;
        }
        return switch (profile.computeSlices()) {
            case 2 -> profile.mediaExtensions() ? NvmlLayout.GI_PROFILE_2_SLICE_REV1 : NvmlLayout.GI_PROFILE_2_SLICE;
            case 3 -> NvmlLayout.GI_PROFILE_3_SLICE;
            case 4 -> NvmlLayout.GI_PROFILE_4_SLICE;
            default -> NvmlLayout.GI_PROFILE_7_SLICE;
        };
    }

    /** The NVML_COMPUTE_INSTANCE_PROFILE_* value spanning a GPU instance of this many compute slices. */
    static int computeInstanceProfile(int computeSlices) {
        return computeSlices >= 1 && computeSlices <= 4 ? computeSlices - 1 : NvmlLayout.CI_PROFILE_7_SLICE;
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
