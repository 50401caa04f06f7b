package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
/** One MIG instance's readings in a telemetry sample; activity as a ratio 0..1. */
public record MigReading(int gpuInstanceId, String profile, String uuid, long memoryUsedMib, Double grEngineActive) {
    public MigReading {
        Require.atLeast(gpuInstanceId, 0, "gpuInstanceId");
        Check.text(profile, Limits.MIG_PROFILE, "profile");
        Check.text(uuid, Limits.LABEL_TEXT, "uuid");
        Require.atLeast(memoryUsedMib, 0, "memoryUsedMib");
    }
}
