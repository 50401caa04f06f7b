/**
 * Running allocations: the {@link dev.gpucloud.agent.runner.AllocationRunner} interface, which the
 * simulated fleet and the {@link dev.gpucloud.agent.runner.ProcessRunner} (one OS process per
 * allocation, its exit code reported) implement, and what both share: usage intervals, GPU claims,
 * remembered ids. Plain Java.
 */
package dev.gpucloud.agent.runner;
