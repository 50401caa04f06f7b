package dev.gpucloud.agent.nvml;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An initialised NVML: each method makes one NVML call and returns its answer, or throws an
 * {@link NvmlException} that names the call, the code and NVML's description. A symbol this
 * libnvidia-ml does not export reads as NVML_ERROR_FUNCTION_NOT_FOUND. Strings are cut at the
 * first NUL or the buffer's end, whichever comes first, and anything unprintable becomes '?'.
 */
public final class Nvml implements AutoCloseable {

    /** The names tried, in order, when no library path is configured. */
    static final List<String> DEFAULT_NAMES = List.of("libnvidia-ml.so.1", "nvidia-ml");

    private final NvmlLibrary lib;
    private final String loadedFrom;
    private boolean open = true;

    private Nvml(NvmlLibrary lib, String loadedFrom) {
        this.lib = lib;
        this.loadedFrom = loadedFrom;
    }

    /**
     * Loads libnvidia-ml and calls nvmlInit_v2. {@code libraryPath} may name the library file or a
     * folder holding libnvidia-ml.so.1 or libnvidia-ml.so; when empty the dynamic loader's search
     * path is used.
     */
    public static Nvml open(Optional<Path> libraryPath) throws NvmlUnavailableException {
        List<String> candidates = new ArrayList<>();
        if (libraryPath.isPresent()) {
            Path path = libraryPath.get().toAbsolutePath();
            if (Files.isDirectory(path)) {
                candidates.add(path.resolve("libnvidia-ml.so.1").toString());
                candidates.add(path.resolve("libnvidia-ml.so").toString());
            } else {
                candidates.add(path.toString());
            }
        } else {
            candidates.addAll(DEFAULT_NAMES);
        }
        List<String> failures = new ArrayList<>();
        for (String candidate : candidates) {
            NvmlLibrary lib;
            try {
                lib = Native.load(candidate, NvmlLibrary.class);
            } catch (UnsatisfiedLinkError e) {
                failures.add(candidate + ": " + firstLine(e.getMessage()));
                continue;
            }
            Nvml nvml = new Nvml(lib, candidate);
            int code;
            try {
                code = lib.nvmlInit_v2();
            } catch (UnsatisfiedLinkError e) {
                failures.add(candidate + ": no nvmlInit_v2 symbol (not libnvidia-ml, or older than driver 325)");
                continue;
            }
            if (code != NvmlReturn.SUCCESS) {
                throw new NvmlUnavailableException("NVML loaded from " + candidate + " but "
                        + new NvmlException("nvmlInit_v2", code, nvml.describe(code)).getMessage());
            }
            return nvml;
        }
        throw new NvmlUnavailableException("cannot load libnvidia-ml: " + String.join("; ", failures));
    }

    /** Where the library was loaded from, as given to the loader. */
    public String loadedFrom() {
        return loadedFrom;
    }

    /** nvmlSystemGetDriverVersion, e.g. "550.54.15". */
    public String driverVersion() {
        byte[] buffer = new byte[NvmlLayout.DRIVER_VERSION_BUFFER];
        check("nvmlSystemGetDriverVersion", () -> lib.nvmlSystemGetDriverVersion(buffer, buffer.length));
        return text(buffer, 0, buffer.length);
    }

    /** nvmlDeviceGetCount_v2: how many GPUs this process may see. */
    public int deviceCount() {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetCount_v2", () -> lib.nvmlDeviceGetCount_v2(count));
        return count.getValue();
    }

    /** nvmlDeviceGetHandleByIndex_v2. */
    public Pointer handle(int index) {
        PointerByReference device = new PointerByReference();
        check("nvmlDeviceGetHandleByIndex_v2", () -> lib.nvmlDeviceGetHandleByIndex_v2(index, device));
        return device.getValue();
    }

    /** nvmlDeviceGetName, e.g. "NVIDIA H100 80GB HBM3" (a MIG device: "... MIG 3g.40gb"). */
    public String name(Pointer device) {
        byte[] buffer = new byte[NvmlLayout.DEVICE_NAME_BUFFER];
        check("nvmlDeviceGetName", () -> lib.nvmlDeviceGetName(device, buffer, buffer.length));
        return text(buffer, 0, buffer.length);
    }

    /** nvmlDeviceGetUUID, e.g. "GPU-..." or "MIG-...". */
    public String uuid(Pointer device) {
        byte[] buffer = new byte[NvmlLayout.DEVICE_UUID_BUFFER];
        check("nvmlDeviceGetUUID", () -> lib.nvmlDeviceGetUUID(device, buffer, buffer.length));
        return text(buffer, 0, buffer.length);
    }

    /** The busId of nvmlDeviceGetPciInfo_v3, e.g. "00000000:18:00.0". */
    public String pciBusId(Pointer device) {
        Memory pci = buffer(NvmlLayout.PCI_INFO_SIZE);
        check("nvmlDeviceGetPciInfo_v3", () -> lib.nvmlDeviceGetPciInfo_v3(device, pci));
        return busId(pci);
    }

    /** nvmlDeviceGetMemoryInfo_v2, in bytes; "used" excludes what the driver reserves. */
    public MemoryInfo memory(Pointer device) {
        Memory memory = buffer(NvmlLayout.MEMORY_V2_SIZE);
        memory.setInt(0, NvmlLayout.MEMORY_V2_VERSION);
        check("nvmlDeviceGetMemoryInfo_v2", () -> lib.nvmlDeviceGetMemoryInfo_v2(device, memory));
        return new MemoryInfo(memory.getLong(NvmlLayout.MEMORY_V2_TOTAL), memory.getLong(NvmlLayout.MEMORY_V2_RESERVED),
                memory.getLong(NvmlLayout.MEMORY_V2_FREE), memory.getLong(NvmlLayout.MEMORY_V2_USED));
    }

    /** nvmlDeviceGetUtilizationRates: percent of the last sample period the GPU and its memory were busy. */
    public Utilization utilization(Pointer device) {
        Memory util = buffer(NvmlLayout.UTILIZATION_SIZE);
        check("nvmlDeviceGetUtilizationRates", () -> lib.nvmlDeviceGetUtilizationRates(device, util));
        return new Utilization(util.getInt(0), util.getInt(4));
    }

    /**
     * The GPU core temperature in degrees C: nvmlDeviceGetTemperatureV where the driver exports it,
     * else the older nvmlDeviceGetTemperature.
     */
    public int temperature(Pointer device) {
        Memory temperature = buffer(NvmlLayout.TEMPERATURE_V1_SIZE);
        temperature.setInt(0, NvmlLayout.TEMPERATURE_V1_VERSION);
        temperature.setInt(4, NvmlLayout.TEMPERATURE_GPU);
        try {
            check("nvmlDeviceGetTemperatureV", () -> lib.nvmlDeviceGetTemperatureV(device, temperature));
            return temperature.getInt(8);
        } catch (NvmlException e) {
            if (e.code() != NvmlReturn.ERROR_FUNCTION_NOT_FOUND && e.code() != NvmlReturn.ERROR_NOT_SUPPORTED
                    && e.code() != NvmlReturn.ERROR_ARGUMENT_VERSION_MISMATCH) {
                throw e;
            }
        }
        IntByReference celsius = new IntByReference();
        check("nvmlDeviceGetTemperature",
                () -> lib.nvmlDeviceGetTemperature(device, NvmlLayout.TEMPERATURE_GPU, celsius));
        return celsius.getValue();
    }

    /** nvmlDeviceGetPowerUsage, in milliwatts. */
    public int powerMilliwatts(Pointer device) {
        IntByReference milliwatts = new IntByReference();
        check("nvmlDeviceGetPowerUsage", () -> lib.nvmlDeviceGetPowerUsage(device, milliwatts));
        return milliwatts.getValue();
    }

    /** nvmlDeviceGetTotalEnergyConsumption, in millijoules since the driver was loaded. */
    public long energyMillijoules(Pointer device) {
        LongByReference millijoules = new LongByReference();
        check("nvmlDeviceGetTotalEnergyConsumption", () -> lib.nvmlDeviceGetTotalEnergyConsumption(device, millijoules));
        return millijoules.getValue();
    }

    /** nvmlDeviceGetClockInfo for {@link NvmlLayout#CLOCK_SM} or {@link NvmlLayout#CLOCK_MEM}, in MHz. */
    public int clockMhz(Pointer device, int clockType) {
        IntByReference mhz = new IntByReference();
        check("nvmlDeviceGetClockInfo", () -> lib.nvmlDeviceGetClockInfo(device, clockType, mhz));
        return mhz.getValue();
    }

    /** nvmlDeviceGetTotalEccErrors of one type, volatile: since the driver was loaded. */
    public long eccErrors(Pointer device, int errorType) {
        LongByReference count = new LongByReference();
        check("nvmlDeviceGetTotalEccErrors",
                () -> lib.nvmlDeviceGetTotalEccErrors(device, errorType, NvmlLayout.ECC_VOLATILE, count));
        return count.getValue();
    }

    /** Whether MIG mode is on now (nvmlDeviceGetMigMode's current mode). */
    public boolean migEnabled(Pointer device) {
        IntByReference current = new IntByReference();
        IntByReference pending = new IntByReference();
        check("nvmlDeviceGetMigMode", () -> lib.nvmlDeviceGetMigMode(device, current, pending));
        return current.getValue() == NvmlLayout.ENABLED;
    }

    /** nvmlDeviceGetMaxMigDeviceCount: how many MIG device slots to look at. */
    public int maxMigDevices(Pointer device) {
        IntByReference count = new IntByReference();
        check("nvmlDeviceGetMaxMigDeviceCount", () -> lib.nvmlDeviceGetMaxMigDeviceCount(device, count));
        return count.getValue();
    }

    /** nvmlDeviceGetMigDeviceHandleByIndex; empty for a slot with no MIG device (NOT_FOUND, INVALID_ARGUMENT). */
    public Optional<Pointer> migDevice(Pointer device, int index) {
        PointerByReference mig = new PointerByReference();
        try {
            check("nvmlDeviceGetMigDeviceHandleByIndex", () -> lib.nvmlDeviceGetMigDeviceHandleByIndex(device, index, mig));
        } catch (NvmlException e) {
            if (e.code() == NvmlReturn.ERROR_NOT_FOUND || e.code() == NvmlReturn.ERROR_INVALID_ARGUMENT) {
                return Optional.empty();
            }
            throw e;
        }
        return Optional.of(mig.getValue());
    }

    /** nvmlDeviceGetGpuInstanceId of a MIG device. */
    public int gpuInstanceId(Pointer migDevice) {
        IntByReference id = new IntByReference();
        check("nvmlDeviceGetGpuInstanceId", () -> lib.nvmlDeviceGetGpuInstanceId(migDevice, id));
        return id.getValue();
    }

    /** nvmlDeviceGetNvLinkState of one link. */
    public boolean nvlinkActive(Pointer device, int link) {
        IntByReference active = new IntByReference();
        check("nvmlDeviceGetNvLinkState", () -> lib.nvmlDeviceGetNvLinkState(device, link, active));
        return active.getValue() == NvmlLayout.ENABLED;
    }

    /** The bus id at the far end of one NVLink (a GPU or an NVSwitch), by nvmlDeviceGetNvLinkRemotePciInfo_v2. */
    public String nvlinkRemoteBusId(Pointer device, int link) {
        Memory pci = buffer(NvmlLayout.PCI_INFO_SIZE);
        check("nvmlDeviceGetNvLinkRemotePciInfo_v2", () -> lib.nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, pci));
        return busId(pci);
    }

    /** nvmlGpuInstanceProfileInfo_t's figures the agent uses: the id to create with, slices and memory. */
    public record GpuInstanceProfile(int id, int sliceCount, long memoryMb) {
    }

    /** nvmlGpuInstanceInfo_t: the instance's id, its profile id and its placement (first slice, slices). */
    public record GpuInstanceInfo(int id, int profileId, int start, int size) {
    }

    /** nvmlDeviceGetGpuInstanceProfileInfo for one NVML_GPU_INSTANCE_PROFILE_* value. */
    public GpuInstanceProfile gpuInstanceProfile(Pointer device, int profile) {
        Memory info = buffer(NvmlLayout.GI_PROFILE_INFO_SIZE);
        check("nvmlDeviceGetGpuInstanceProfileInfo", () -> lib.nvmlDeviceGetGpuInstanceProfileInfo(device, profile, info));
        return new GpuInstanceProfile(info.getInt(0), info.getInt(8), info.getLong(NvmlLayout.GI_PROFILE_INFO_MEMORY_MB));
    }

    /** nvmlDeviceCreateGpuInstanceWithPlacement: a GPU instance of {@code profileId} on slices [start, start + size). */
    public Pointer createGpuInstance(Pointer device, int profileId, int start, int size) {
        Memory placement = buffer(NvmlLayout.PLACEMENT_SIZE);
        placement.setInt(0, start);
        placement.setInt(4, size);
        PointerByReference gpuInstance = new PointerByReference();
        check("nvmlDeviceCreateGpuInstanceWithPlacement",
                () -> lib.nvmlDeviceCreateGpuInstanceWithPlacement(device, profileId, placement, gpuInstance));
        return gpuInstance.getValue();
    }

    /** nvmlDeviceGetGpuInstanceById. */
    public Pointer gpuInstanceById(Pointer device, int id) {
        PointerByReference gpuInstance = new PointerByReference();
        check("nvmlDeviceGetGpuInstanceById", () -> lib.nvmlDeviceGetGpuInstanceById(device, id, gpuInstance));
        return gpuInstance.getValue();
    }

    /** nvmlGpuInstanceGetInfo. */
    public GpuInstanceInfo gpuInstanceInfo(Pointer gpuInstance) {
        Memory info = buffer(NvmlLayout.GI_INFO_SIZE);
        check("nvmlGpuInstanceGetInfo", () -> lib.nvmlGpuInstanceGetInfo(gpuInstance, info));
        return new GpuInstanceInfo(info.getInt(NvmlLayout.GI_INFO_ID), info.getInt(NvmlLayout.GI_INFO_ID + 4),
                info.getInt(NvmlLayout.GI_INFO_PLACEMENT_START), info.getInt(NvmlLayout.GI_INFO_PLACEMENT_SIZE));
    }

    /** The id of compute-instance profile {@code profile} (shared engines) in a GPU instance. */
    public int computeInstanceProfileId(Pointer gpuInstance, int profile) {
        Memory info = buffer(NvmlLayout.CI_PROFILE_INFO_SIZE);
        check("nvmlGpuInstanceGetComputeInstanceProfileInfo", () -> lib.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gpuInstance, profile, NvmlLayout.CI_ENGINE_PROFILE_SHARED, info));
        return info.getInt(0);
    }

    /** nvmlGpuInstanceCreateComputeInstance. */
    public Pointer createComputeInstance(Pointer gpuInstance, int profileId) {
        PointerByReference computeInstance = new PointerByReference();
        check("nvmlGpuInstanceCreateComputeInstance",
                () -> lib.nvmlGpuInstanceCreateComputeInstance(gpuInstance, profileId, computeInstance));
        return computeInstance.getValue();
    }

    /** nvmlGpuInstanceGetComputeInstanceById. */
    public Pointer computeInstanceById(Pointer gpuInstance, int id) {
        PointerByReference computeInstance = new PointerByReference();
        check("nvmlGpuInstanceGetComputeInstanceById",
                () -> lib.nvmlGpuInstanceGetComputeInstanceById(gpuInstance, id, computeInstance));
        return computeInstance.getValue();
    }

    /** nvmlDeviceGetComputeInstanceId of a MIG device. */
    public int computeInstanceId(Pointer migDevice) {
        IntByReference id = new IntByReference();
        check("nvmlDeviceGetComputeInstanceId", () -> lib.nvmlDeviceGetComputeInstanceId(migDevice, id));
        return id.getValue();
    }

    /** nvmlComputeInstanceDestroy. */
    public void destroyComputeInstance(Pointer computeInstance) {
        check("nvmlComputeInstanceDestroy", () -> lib.nvmlComputeInstanceDestroy(computeInstance));
    }

    /** nvmlGpuInstanceDestroy. */
    public void destroyGpuInstance(Pointer gpuInstance) {
        check("nvmlGpuInstanceDestroy", () -> lib.nvmlGpuInstanceDestroy(gpuInstance));
    }

    /** nvmlGpmQueryDeviceSupport: whether the GPU has GPM (Hopper and later). */
    public boolean gpmSupported(Pointer device) {
        Memory support = buffer(NvmlLayout.GPM_SUPPORT_SIZE);
        support.setInt(0, NvmlLayout.GPM_SUPPORT_VERSION);
        check("nvmlGpmQueryDeviceSupport", () -> lib.nvmlGpmQueryDeviceSupport(device, support));
        return support.getInt(4) != 0;
    }

    /** nvmlGpmSampleAlloc: a sample buffer, to be given back with {@link #gpmSampleFree}. */
    public Pointer gpmSampleAlloc() {
        PointerByReference sample = new PointerByReference();
        check("nvmlGpmSampleAlloc", () -> lib.nvmlGpmSampleAlloc(sample));
        return sample.getValue();
    }

    /** nvmlGpmSampleFree. */
    public void gpmSampleFree(Pointer sample) {
        check("nvmlGpmSampleFree", () -> lib.nvmlGpmSampleFree(sample));
    }

    /** nvmlGpmMigSampleGet: the counters of GPU instance {@code gpuInstanceId} of {@code device}, now. */
    public void gpmMigSample(Pointer device, int gpuInstanceId, Pointer sample) {
        check("nvmlGpmMigSampleGet", () -> lib.nvmlGpmMigSampleGet(device, gpuInstanceId, sample));
    }

    /** nvmlGpmMetricsGet of one metric between two samples, {@code earlier} taken first. */
    public double gpmMetric(Pointer earlier, Pointer later, int metricId) {
        Memory get = buffer(NvmlLayout.GPM_METRICS_GET_SIZE);
        get.setInt(0, NvmlLayout.GPM_METRICS_GET_VERSION);
        get.setInt(4, 1);
        get.setPointer(NvmlLayout.GPM_METRICS_GET_SAMPLE1, earlier);
        get.setPointer(NvmlLayout.GPM_METRICS_GET_SAMPLE2, later);
        get.setInt(NvmlLayout.GPM_METRICS_GET_METRICS, metricId);
        check("nvmlGpmMetricsGet", () -> lib.nvmlGpmMetricsGet(get));
        int code = get.getInt(NvmlLayout.GPM_METRICS_GET_METRICS + NvmlLayout.GPM_METRIC_RETURN);
        if (code != NvmlReturn.SUCCESS) {
            throw new NvmlException("nvmlGpmMetricsGet (metric " + metricId + ")", code, describe(code));
        }
        return get.getDouble(NvmlLayout.GPM_METRICS_GET_METRICS + NvmlLayout.GPM_METRIC_VALUE);
    }

    /** nvmlShutdown; a second close does nothing. */
    @Override
    public synchronized void close() {
        if (open) {
            open = false;
            lib.nvmlShutdown();
        }
    }

    /** "nvmlErrorString's words", or "" when the library cannot say. */
    String describe(int code) {
        try {
            String text = lib.nvmlErrorString(code);
            return text == null ? "" : printable(text);
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return "";
        }
    }

    /** An event from an NVML event set: the device it came from, its type bit and its data (the XID). */
    public record Event(Pointer device, long type, long data) {
    }

    /** nvmlEventTypeXidCriticalError. */
    public static final long EVENT_XID_CRITICAL_ERROR = 0x8L;

    /** nvmlEventSetCreate. */
    public Pointer eventSetCreate() {
        PointerByReference set = new PointerByReference();
        check("nvmlEventSetCreate", () -> lib.nvmlEventSetCreate(set));
        return set.getValue();
    }

    /** nvmlDeviceRegisterEvents. */
    public void registerEvents(Pointer device, long types, Pointer set) {
        check("nvmlDeviceRegisterEvents", () -> lib.nvmlDeviceRegisterEvents(device, types, set));
    }

    /** nvmlEventSetWait_v2; null when nothing arrived within {@code timeoutMs} (NVML_ERROR_TIMEOUT). */
    public Event eventSetWait(Pointer set, int timeoutMs) {
        Memory data = buffer(EVENT_DATA_SIZE);
        int code;
        try {
            code = lib.nvmlEventSetWait_v2(set, data, timeoutMs);
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlException("nvmlEventSetWait_v2", NvmlReturn.ERROR_FUNCTION_NOT_FOUND,
                    "this libnvidia-ml does not export nvmlEventSetWait_v2");
        }
        if (code == ERROR_TIMEOUT) {
            return null;
        }
        if (code != NvmlReturn.SUCCESS) {
            throw new NvmlException("nvmlEventSetWait_v2", code, describe(code));
        }
        return new Event(data.getPointer(0), data.getLong(8), data.getLong(16));
    }

    /** nvmlEventSetFree. */
    public void eventSetFree(Pointer set) {
        check("nvmlEventSetFree", () -> lib.nvmlEventSetFree(set));
    }

    /** sizeof(nvmlEventData_t) on 64-bit: device pointer, eventType, eventData, two instance ids. */
    static final int EVENT_DATA_SIZE = 32;
    static final int ERROR_TIMEOUT = 10;

    private void check(String call, NativeCall nativeCall) {
        int code;
        try {
            code = nativeCall.invoke();
        } catch (UnsatisfiedLinkError e) {
            throw new NvmlException(call, NvmlReturn.ERROR_FUNCTION_NOT_FOUND, "this libnvidia-ml does not export " + call);
        }
        if (code != NvmlReturn.SUCCESS) {
            throw new NvmlException(call, code, describe(code));
        }
    }

    private static Memory buffer(int size) {
        Memory memory = new Memory(size);
        memory.clear();
        return memory;
    }

    private static String busId(Memory pci) {
        byte[] bytes = pci.getByteArray(NvmlLayout.PCI_BUS_ID_OFFSET, NvmlLayout.PCI_BUS_ID_LENGTH);
        return text(bytes, 0, bytes.length);
    }

    /** A C string from a fixed buffer: up to the first NUL or the end, never past it. */
    static String text(byte[] bytes, int offset, int length) {
        int end = offset;
        while (end < offset + length && bytes[end] != 0) {
            end++;
        }
        return printable(new String(bytes, offset, end - offset, StandardCharsets.UTF_8)).strip();
    }

    private static String printable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(c -> out.appendCodePoint(c >= 0x20 && c < 0x7f ? c : '?'));
        return out.toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "not found";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    @FunctionalInterface
    private interface NativeCall {
        int invoke();
    }

    /** nvmlMemory_v2_t, in bytes. */
    public record MemoryInfo(long total, long reserved, long free, long used) {
    }

    /** nvmlUtilization_t, in percent. */
    public record Utilization(int gpu, int memory) {
    }
}
