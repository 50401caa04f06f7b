package dev.gpucloud.agent.messaging;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Refuses node commands from a deposed scheduler leader. Each command carries the epoch of the leader
 * that wrote it; once this agent has seen an epoch, a command of a lower one comes from a leader that
 * has since lost its lease (a paused process resumed, or a producer's late retry), and is refused.
 * Commands of epoch 0 come from a sender outside leader election and are refused once any leader has
 * spoken. The highest epoch lives in memory: a restarted agent learns it again from the next command.
 */
public final class EpochFence {

    private final AtomicLong highest = new AtomicLong();

    /** Whether a command of {@code epoch} may run; raises the highest epoch seen when it is newer. */
    public boolean admit(long epoch) {
        return highest.accumulateAndGet(epoch, Math::max) == epoch;
    }

    /** The highest leader epoch this agent has seen (0: none yet). */
    public long highest() {
        return highest.get();
    }
}
