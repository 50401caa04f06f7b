package dev.gpucloud.contracts.events;

/** One MIG instance's readings in a telemetry sample; activity as a ratio 0..1. */
public record MigReading(int gpuInstanceId, String profile, String uuid, long memoryUsedMib, Double grEngineActive) {
    public MigReading {
        Require.atLeast(gpuInstanceId, 0, "gpuInstanceId");
        Require.text(profile, "profile");
        Require.text(uuid, "uuid");
        Require.atLeast(memoryUsedMib, 0, "memoryUsedMib");
    }
}
