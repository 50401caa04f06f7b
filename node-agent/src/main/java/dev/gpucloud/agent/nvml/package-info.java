/**
 * The GPU backends of the one real host an agent runs on: NVML through JNA ({@link
 * dev.gpucloud.agent.nvml.NvmlBackend}) and the nvidia-smi fallback ({@link
 * dev.gpucloud.agent.nvml.NvidiaSmiBackend}), both implementing {@link
 * dev.gpucloud.agent.backend.GpuBackend}. Plain Java and JNA; no framework.
 */
package dev.gpucloud.agent.nvml;
