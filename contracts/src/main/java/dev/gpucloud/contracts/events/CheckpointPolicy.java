package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;

/** How often a job saves a checkpoint (0: never) and where. */
public record CheckpointPolicy(int intervalSeconds, String location) {
    public static final CheckpointPolicy NONE = new CheckpointPolicy(0, null);

    public CheckpointPolicy {
        Check.number(intervalSeconds, Limits.CHECKPOINT_INTERVAL, "spec.checkpoint.intervalSeconds");
        Check.optionalText(location, Limits.CHECKPOINT_LOCATION, "spec.checkpoint.location");
        if (intervalSeconds > 0) {
            Require.text(location, "spec.checkpoint.location");
        }
    }
}
