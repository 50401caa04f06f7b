package dev.gpucloud.contracts.events;

/** How often a job saves a checkpoint (0: never) and where. */
public record CheckpointPolicy(int intervalSeconds, String location) {
    public static final CheckpointPolicy NONE = new CheckpointPolicy(0, null);

    public CheckpointPolicy {
        Require.atLeast(intervalSeconds, 0, "checkpoint.intervalSeconds");
        if (intervalSeconds > 0) {
            Require.text(location, "checkpoint.location");
        }
    }
}
