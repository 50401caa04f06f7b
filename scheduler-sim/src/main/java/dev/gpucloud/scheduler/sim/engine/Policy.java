package dev.gpucloud.scheduler.sim.engine;

/**
 * Decides, at each event, which queued and running jobs run and where. The engine calls
 * {@link #schedule} once per distinct event time, after applying every event of that time; the
 * policy acts only through the {@link Decisions} it is given (start, keep, preempt). A policy may
 * ask to be called again at a time of its choosing with no other event ({@link #nextTick}), e.g. when
 * a running job will cross a queue limit.
 */
public interface Policy {

    String name();

    /** Whether the policy reads job durations (an oracle); reported with the results. */
    default boolean knowsDurations() {
        return false;
    }

    void schedule(Decisions decisions);

    /** A job finished (its duration is now known to everyone); policies that learn from history use it. */
    default void completed(SimJob job) {
    }

    /** The next time (virtual ms, after {@code now}) the policy wants a decision with no other event; MAX_VALUE for none. */
    default long nextTick(Decisions decisions) {
        return Long.MAX_VALUE;
    }
}
