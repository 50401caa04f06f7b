package dev.gpucloud.contracts.events;

/** One MIG GPU instance carved out of a physical GPU, e.g. profile "1g.10gb". */
public record MigInstance(int gpuInstanceId, String profile, String uuid, long memoryMib) {
    public MigInstance {
        Require.atLeast(gpuInstanceId, 0, "gpuInstanceId");
        Require.text(profile, "profile");
        Require.text(uuid, "uuid");
        Require.atLeast(memoryMib, 1, "memoryMib");
    }
}
