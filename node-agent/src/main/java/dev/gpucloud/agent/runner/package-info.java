/**
 * Running allocations: the interface that the simulated fleet implements now and a process runner
 * (one OS process per worker, its exit code reported) will implement for real hosts. Plain Java.
 */
package dev.gpucloud.agent.runner;
