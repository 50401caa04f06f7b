package dev.gpucloud.agent.cloud;

import java.time.Instant;

/**
 * A notice from the cloud about this instance: it will be reclaimed at {@code deadline} (a spot
 * interruption or preemption), or the cloud advises moving work off it (a rebalance
 * recommendation, no deadline). {@code id} tells one notice from another, so each is published once.
 */
public record CloudNotice(Kind kind, String cloud, String id, Instant deadline, String detail) {

    public enum Kind { SPOT_INTERRUPTION, REBALANCE_RECOMMENDATION }

    public CloudNotice {
        if (kind == null || cloud == null || id == null) {
            throw new IllegalArgumentException("kind, cloud and id must be set");
        }
        if (kind == Kind.SPOT_INTERRUPTION && deadline == null) {
            throw new IllegalArgumentException("a spot interruption needs a deadline");
        }
    }
}
