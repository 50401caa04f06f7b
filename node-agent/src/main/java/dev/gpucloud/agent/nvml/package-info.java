/**
 * Reserved for the NVML backend (JNA bindings to libnvidia-ml, with an nvidia-smi fallback), which
 * will implement {@link dev.gpucloud.agent.backend.GpuBackend} for the one real host an agent runs on.
 */
package dev.gpucloud.agent.nvml;
