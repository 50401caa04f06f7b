package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.AllocationIds;
import java.time.Duration;
import java.time.YearMonth;

/**
 * How usage becomes billed seconds: an allocation's usage is rounded up to whole seconds and never billed
 * below a minimum (AWS bills per second with a 60-second minimum). A month is billed what the allocation's
 * running total grew by in that month, so the months of one allocation add up to exactly its billed total,
 * the minimum falls in the month the allocation started, and a month's figure depends only on usage up to
 * its end.
 */
public record BillingPolicy(long minimumSeconds) {

    /** AWS EC2's minimum for per-second billing. */
    public static final long AWS_MINIMUM_SECONDS = 60;

    public BillingPolicy {
        if (minimumSeconds < 0) {
            throw new IllegalArgumentException("minimum billable seconds must be >= 0, was " + minimumSeconds);
        }
    }

    public static BillingPolicy awsPerSecond() {
        return new BillingPolicy(AWS_MINIMUM_SECONDS);
    }

    /** Billed seconds for a total usage: none for none, else whole seconds rounded up, at least the minimum. */
    public long billedSeconds(Duration usage) {
        if (usage.isNegative() || usage.isZero()) {
            return 0;
        }
        long seconds = usage.getSeconds() + (usage.getNano() > 0 ? 1 : 0);
        return Math.max(minimumSeconds, seconds);
    }

    /**
     * Billed seconds of {@code allocation} that fall in {@code window}. The minimum is charged on a job's first
     * attempt only: a rerun's allocation (the platform lost the attempt before it, or the job failed and is
     * retried) is billed what it used, rounded up, with no second minimum.
     */
    public long billedSecondsIn(MeteredAllocation allocation, Interval window) {
        boolean rerun = AllocationIds.attempt(allocation.jobId(), allocation.allocationId()) > 1;
        return (rerun ? new BillingPolicy(0) : this).billedSecondsIn(allocation.usage(), window);
    }

    /** As {@link #billedSecondsIn(MeteredAllocation, Interval)}, for {@code month} (UTC). */
    public long billedSecondsIn(MeteredAllocation allocation, YearMonth month) {
        return billedSecondsIn(allocation, Interval.month(month));
    }

    /** Billed seconds of one allocation that fall in {@code month} (UTC). */
    public long billedSecondsIn(IntervalUnion usage, YearMonth month) {
        return billedSecondsIn(usage, Interval.month(month));
    }

    /**
     * Billed seconds of one allocation that fall in {@code window}: what its billed running total grew by
     * there. Windows that split a span add up to the span's figure exactly; the minimum falls in the window
     * where the allocation started (a month, or the price period in force when it started).
     */
    public long billedSecondsIn(IntervalUnion usage, Interval window) {
        long throughEnd = billedSeconds(usage.before(window.to()).total());
        long beforeStart = billedSeconds(usage.before(window.from()).total());
        return throughEnd - beforeStart;
    }
}
