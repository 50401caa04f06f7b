package dev.gpucloud.billing.fold.advisor;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What the advisor assumes where usage and the catalog cannot say.
 *
 * @param spotEligibleJobs jobs whose id matches are spot-tolerant (checkpointed training: the seeds' "spot with
 *        checkpoints for training"); usage that already ran on SPOT is spot-tolerant whatever its job
 * @param spotPricePercent a SPOT price, for a model the catalog has none for, as a percentage of its on-demand
 *        price (30: the seeds' p3.2xlarge $0.93/h spot against $3.06/h on demand)
 * @param reservedPricePercent a committed price, for a model the catalog has no RESERVED price for, as a percentage
 *        of its on-demand price (60: the seeds' p3.2xlarge $1.84/h reserved against $3.06/h)
 * @param historyMonths how many months, the advised one included, the commitment level is chosen over
 */
public record AdvisorAssumptions(Pattern spotEligibleJobs, int spotPricePercent, int reservedPricePercent,
        int historyMonths) {

    public AdvisorAssumptions {
        if (spotPricePercent < 0 || spotPricePercent > 100) {
            throw new IllegalArgumentException("spot price percent must be within 0..100, was " + spotPricePercent);
        }
        if (reservedPricePercent < 0 || reservedPricePercent > 100) {
            throw new IllegalArgumentException("reserved price percent must be within 0..100, was "
                    + reservedPricePercent);
        }
        if (historyMonths < 1 || historyMonths > 60) {
            throw new IllegalArgumentException("history months must be within 1..60, was " + historyMonths);
        }
    }

    /** The defaults documented in docs/billing.md. */
    public static AdvisorAssumptions defaults() {
        return new AdvisorAssumptions(Pattern.compile("(?i).*(train|checkpoint).*"), 30, 60, 12);
    }

    /** The assumptions in words, as the advice states them. */
    public List<String> describe() {
        return List.of(
                "spot-tolerant: usage that already ran on SPOT, and jobs whose id matches '" + spotEligibleJobs
                        + "' (checkpointed training); everything else needs on-demand or reserved capacity",
                "a model without a SPOT price in the catalog is assumed to cost " + spotPricePercent
                        + "% of its on-demand price on spot",
                "a model without a RESERVED price in the catalog is assumed to cost " + reservedPricePercent
                        + "% of its on-demand price under a commitment",
                "the commitment level (SKU-hours a month, paid used or not) minimises the cost over the last "
                        + historyMonths + " months of usage, this one included; spot-tolerant usage is left out of it");
    }
}
