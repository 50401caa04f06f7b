package dev.gpucloud.agent.backend;

import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.TelemetrySample;
import java.util.List;

/**
 * Where an agent learns about its GPUs: NVML on a real host, nvidia-smi as a fallback, or a
 * simulation. One agent may speak for several hosts (a simulated fleet), so both answers are lists.
 */
public interface GpuBackend {

    /** The name put in {@link HostInventory#backend()}: "nvml", "nvidia-smi" or "simulated". */
    String name();

    /** The description of every host this backend speaks for, as observed now. */
    List<HostInventory> inventory();

    /** One telemetry sample of every host, taken now. */
    List<TelemetrySample> sample();
}
