/**
 * Simulated GPU hosts for machines without GPUs: the fleet, its telemetry, the simulated run
 * clock and the cutting of usage into intervals. Plain Java with an injected clock; nothing here
 * imports a framework (an ArchUnit test holds that line).
 */
package dev.gpucloud.agent.sim;
