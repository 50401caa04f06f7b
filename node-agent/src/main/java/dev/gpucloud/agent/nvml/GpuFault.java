package dev.gpucloud.agent.nvml;

import java.time.Instant;

/** A GPU, or the whole backend (gpuIndex -1), failed a read: when, and NVML's or nvidia-smi's reason. */
public record GpuFault(Instant at, int gpuIndex, String message) {
}
