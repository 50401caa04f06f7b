package dev.gpucloud.agent.nvml;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuReading;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A one-shot check on a real GPU host: reads every GPU through the NVML backend (JNA) and through
 * nvidia-smi, prints both side by side and says where they disagree. Identity (name, UUID, PCI bus
 * id, memory total) must match exactly; readings that move (utilization, temperature, power,
 * clocks) are printed and compared loosely. Exit code 0 when identity matches, 1 when it does not,
 * 2 when a backend cannot be opened. It then prints the MIG side, read only: GPM support, MIG
 * instances with their placement and their engine activity over one second.
 * Usage: {@code NvmlCompare [libnvidia-ml path] [nvidia-smi path]}.
 */
public final class NvmlCompare {

    private NvmlCompare() {
    }

    public static void main(String[] args) throws Exception {
        Optional<Path> library = args.length > 0 && !args[0].isBlank() ? Optional.of(Path.of(args[0])) : Optional.empty();
        String smi = args.length > 1 ? args[1] : "nvidia-smi";
        HostFacts host = new HostFacts("device-check", "device-check", "unknown", "unknown", CapacityType.ON_DEMAND, 0,
                Runtime.getRuntime().availableProcessors() * 1000, 0, null, List.of());
        Clock clock = Clock.systemUTC();
        NvmlBackend nvml;
        Nvml lib;
        try {
            lib = Nvml.open(library);
            System.out.printf("NVML: loaded from %s, driver %s%n", lib.loadedFrom(), lib.driverVersion());
            nvml = new NvmlBackend(lib, host, clock);
        } catch (NvmlUnavailableException e) {
            System.out.println("NVML backend unavailable: " + e.getMessage());
            System.exit(2);
            return;
        }
        NvidiaSmiBackend nvidiaSmi;
        try {
            nvidiaSmi = NvidiaSmiBackend.open(smi, Duration.ofSeconds(20), host, clock);
        } catch (NvmlUnavailableException e) {
            System.out.println("nvidia-smi backend unavailable: " + e.getMessage());
            System.exit(2);
            return;
        }
        long t0 = System.nanoTime();
        HostInventory a = nvml.inventory().get(0);
        TelemetrySample sa = nvml.sample().get(0);
        long nvmlMicros = (System.nanoTime() - t0) / 1000;
        t0 = System.nanoTime();
        HostInventory b = nvidiaSmi.inventory().get(0);
        TelemetrySample sb = nvidiaSmi.sample().get(0);
        long smiMicros = (System.nanoTime() - t0) / 1000;
        System.out.printf("inventory + one sample: NVML %d us, nvidia-smi %d us%n", nvmlMicros, smiMicros);
        System.out.printf("GPUs: NVML %d, nvidia-smi %d%n", a.gpus().size(), b.gpus().size());
        int mismatches = a.gpus().size() == b.gpus().size() ? 0 : 1;
        for (int i = 0; i < Math.min(a.gpus().size(), b.gpus().size()); i++) {
            GpuDevice ga = a.gpus().get(i);
            GpuDevice gb = b.gpus().get(i);
            System.out.printf("GPU %d%n", i);
            mismatches += row("name", ga.model(), gb.model(), true);
            mismatches += row("uuid", ga.uuid(), gb.uuid(), true);
            mismatches += row("pci bus id", ga.pciBusId(), gb.pciBusId(), true);
            mismatches += row("memory MiB", ga.memoryMib(), gb.memoryMib(), true);
            row("MIG mode", ga.migEnabled(), gb.migEnabled(), false);
            row("MIG instances", ga.migInstances().size(), gb.migInstances().size(), false);
            row("NVLink island", ga.nvlinkIsland(), gb.nvlinkIsland(), false);
            GpuReading ra = reading(sa, i);
            GpuReading rb = reading(sb, i);
            if (ra != null && rb != null) {
                row("util %", ra.gpuUtilPercent(), rb.gpuUtilPercent(), false);
                row("memory used MiB", ra.memoryUsedMib(), rb.memoryUsedMib(), false);
                row("temperature C", ra.temperatureC(), rb.temperatureC(), false);
                row("power W", ra.powerWatts(), rb.powerWatts(), false);
                row("energy mJ", ra.energyMillijoules(), rb.energyMillijoules(), false);
                row("SM clock MHz", ra.smClockMhz(), rb.smClockMhz(), false);
                row("memory clock MHz", ra.memClockMhz(), rb.memClockMhz(), false);
                row("ECC corrected", ra.eccCorrected(), rb.eccCorrected(), false);
                row("ECC uncorrected", ra.eccUncorrected(), rb.eccUncorrected(), false);
            }
        }
        mig(lib, nvml, a);
        nvml.faults().forEach(f -> System.out.println("NVML fault: " + f));
        System.out.println(mismatches == 0 ? "RESULT: identity matches" : "RESULT: " + mismatches + " identity mismatch(es)");
        nvml.close();
        System.exit(mismatches == 0 ? 0 : 1);
    }

    /**
     * The MIG side, read only (the check never changes the GPU): per GPU, GPM support and the MIG
     * profiles the agent would accept; per MIG instance, its placement, and its graphics-engine
     * activity over one second (two GPM samples).
     */
    private static void mig(Nvml lib, NvmlBackend nvml, HostInventory host) throws InterruptedException {
        System.out.println("--- MIG and GPM (read only: no instance is created or destroyed)");
        boolean anyMig = false;
        for (GpuDevice gpu : host.gpus()) {
            String gpm;
            try {
                gpm = lib.gpmSupported(lib.handle(gpu.index())) ? "supported" : "not supported by this GPU";
            } catch (NvmlException e) {
                gpm = "unavailable: " + e.getMessage();
            }
            System.out.printf("GPU %d %s: MIG mode %s, GPM %s%n", gpu.index(), gpu.model(), gpu.migEnabled() ? "on" : "off",
                    gpm);
            dev.gpucloud.geometry.NvidiaMigTable.forGpu(gpu.model(), gpu.memoryMib()).ifPresent(g -> System.out.printf(
                    "  MIG profiles (%s): %s%n", g.name(), g.profiles().stream()
                            .sorted(java.util.Comparator.comparing(dev.gpucloud.geometry.MigProfile::name))
                            .map(p -> p.name() + "@" + p.starts()).toList()));
            anyMig |= gpu.migEnabled();
        }
        if (!anyMig) {
            System.out.println("no GPU is in MIG mode: no MIG instances, placements or per-MIG activity to show");
            return;
        }
        nvml.sample(); // the first GPM sample of each instance
        Thread.sleep(1000);
        TelemetrySample later = nvml.sample().get(0);
        for (GpuDevice gpu : host.gpus()) {
            GpuReading reading = reading(later, gpu.index());
            for (dev.gpucloud.contracts.events.MigInstance m : gpu.migInstances()) {
                Double active = reading == null ? null : reading.migInstances().stream()
                        .filter(r -> r.uuid().equals(m.uuid())).findFirst()
                        .map(dev.gpucloud.contracts.events.MigReading::grEngineActive).orElse(null);
                System.out.printf(Locale.ROOT, "  GPU %d MIG %-12s gi %-2d start %-4s %6d MiB %s grEngineActive %s%n",
                        gpu.index(), m.profile(), m.gpuInstanceId(), m.placementStart(), m.memoryMib(), m.uuid(), active);
            }
        }
        nvml.notices().forEach(n -> System.out.println("NVML notice: " + n));
    }

    private static GpuReading reading(TelemetrySample sample, int index) {
        return sample.gpus().stream().filter(g -> g.index() == index).findFirst().orElse(null);
    }

    private static int row(String what, Object nvml, Object smi, boolean mustMatch) {
        boolean same = Objects.equals(nvml, smi);
        System.out.printf(Locale.ROOT, "  %-18s NVML %-40s nvidia-smi %-40s %s%n", what, nvml, smi,
                same ? "" : mustMatch ? "MISMATCH" : "differs");
        return mustMatch && !same ? 1 : 0;
    }
}
