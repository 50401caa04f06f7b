package dev.gpucloud.autoscaler.provider.simulated;

/** A spot instance the cloud took back at {@code atMillis}: the caller requeues its jobs from their checkpoints. */
public record SpotInterruption(String instanceId, String instanceType, String zone, String pool, long atMillis) {}
