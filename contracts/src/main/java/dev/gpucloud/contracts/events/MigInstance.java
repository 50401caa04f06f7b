package dev.gpucloud.contracts.events;

/**
 * One MIG GPU instance carved out of a physical GPU, e.g. profile "1g.10gb". {@code placementStart}
 * is the first memory slice it occupies (NVML's placement start, 0..7); null when the agent cannot
 * tell.
 */
public record MigInstance(int gpuInstanceId, String profile, String uuid, long memoryMib, Integer placementStart) {
    public MigInstance {
        Require.atLeast(gpuInstanceId, 0, "gpuInstanceId");
        Require.text(profile, "profile");
        Require.text(uuid, "uuid");
        Require.atLeast(memoryMib, 1, "memoryMib");
        if (placementStart != null && (placementStart < 0 || placementStart > 7)) {
            throw new IllegalArgumentException("field 'placementStart' must be 0..7, got " + placementStart);
        }
    }

    /** An instance whose placement is not known. */
    public MigInstance(int gpuInstanceId, String profile, String uuid, long memoryMib) {
        this(gpuInstanceId, profile, uuid, memoryMib, null);
    }
}
