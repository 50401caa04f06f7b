package dev.gpucloud.autoscaler.core;

import java.util.List;
import java.util.Objects;

/**
 * One thing the autoscaler decided, or declined to do, with the reason in words an operator reads ("release
 * host-7: idle 11 min >= 10 min"). {@code subject} is the pool, host or job it concerns; {@code jobIds} the pending
 * jobs it answers for.
 */
public record Decision(Kind kind, String subject, List<String> jobIds, String reason) {

    public Decision {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(reason, "reason");
        jobIds = List.copyOf(jobIds);
    }

    /** What kind of decision. */
    public enum Kind {
        /** Hosts asked for. */
        LAUNCH,
        /** A host terminated. */
        RELEASE,
        /** A host emptied before release. */
        DRAIN,
        /** A host that could go, kept because its pool is at its minimum. */
        KEEP,
        /** Pending jobs that fit on hosts the fleet has or has asked for: nothing to launch. */
        WAIT,
        /** Pending jobs a launch would serve, held back by a pool's limit. */
        HOLD,
        /** Pending jobs no type in the catalog and pool can hold. */
        UNPLACEABLE,
        /** Something wrong with the inputs that the autoscaler worked around. */
        CONFIG
    }

    @Override
    public String toString() {
        return reason;
    }
}
