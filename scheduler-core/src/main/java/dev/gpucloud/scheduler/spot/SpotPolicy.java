package dev.gpucloud.scheduler.spot;

import dev.gpucloud.contracts.events.CapacityPreference;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the scheduler does about spot capacity. After an interruption, the pool (zone and instance
 * type, which clouds reclaim together) is avoided for {@code poolAvoidMillis}; a job interrupted
 * {@code maxInterruptions} times, or whose deadline is at risk on spot, runs on on-demand from then
 * on. Clouds give 2 minutes' notice (AWS) or 30 seconds (GCP, Azure). Not thread-safe.
 */
public final class SpotPolicy {

    private final int maxInterruptions;
    private final long poolAvoidMillis;
    private final double deadlineMargin;
    private final Map<String, Long> avoidUntil = new HashMap<>();

    /** {@code deadlineMargin} 0.5 means: on-demand once less than 1.5 x the remaining estimate is left. */
    public SpotPolicy(int maxInterruptions, long poolAvoidMillis, double deadlineMargin) {
        if (maxInterruptions < 1 || poolAvoidMillis < 0 || deadlineMargin < 0) {
            throw new IllegalArgumentException("spot policy needs maxInterruptions >= 1 and non-negative windows");
        }
        this.maxInterruptions = maxInterruptions;
        this.poolAvoidMillis = poolAvoidMillis;
        this.deadlineMargin = deadlineMargin;
    }

    public static SpotPolicy defaults() {
        return new SpotPolicy(3, 30 * 60_000L, 0.5);
    }

    /** A spot host of {@code pool} was reclaimed (or got its notice) at {@code atMillis}. */
    public void interrupted(String pool, long atMillis) {
        avoidUntil.merge(pool, atMillis + poolAvoidMillis, Math::max);
    }

    /** The pools to stay away from now. */
    public Set<String> avoidedPools(long nowMillis) {
        avoidUntil.values().removeIf(until -> until <= nowMillis);
        return new TreeSet<>(avoidUntil.keySet());
    }

    /**
     * The capacity a job's next placement asks for: its own preference, or on-demand once it was
     * interrupted too often or its deadline (epoch ms, or 0 for none) would be at risk on spot.
     */
    public CapacityPreference capacityFor(CapacityPreference wanted, int interruptions, long deadlineMillis,
            long nowMillis, long remainingEstimateSeconds) {
        if (wanted == CapacityPreference.ON_DEMAND) {
            return wanted;
        }
        if (interruptions >= maxInterruptions) {
            return CapacityPreference.ON_DEMAND;
        }
        if (deadlineMillis > 0 && remainingEstimateSeconds > 0) {
            double needed = remainingEstimateSeconds * 1000.0 * (1 + deadlineMargin);
            if (deadlineMillis - nowMillis < needed) {
                return CapacityPreference.ON_DEMAND;
            }
        }
        return wanted;
    }

    /** Why {@link #capacityFor} moved the job to on-demand, for its event. */
    public String fallbackReason(int interruptions) {
        return interruptions >= maxInterruptions
                ? "interrupted " + interruptions + " times on spot: falls back to on-demand"
                : "deadline at risk on spot: falls back to on-demand";
    }
}
