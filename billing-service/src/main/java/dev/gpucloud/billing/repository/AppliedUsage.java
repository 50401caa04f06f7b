package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.fold.MeteredAllocation;
import java.time.Duration;

/**
 * What one usage event did to the ledger: nothing ({@code repeat}: its ce_id was applied before), or it
 * added {@code added} of new usage to {@code allocation}, whose usage is now as given.
 */
public record AppliedUsage(boolean repeat, Duration added, MeteredAllocation allocation) {

    public static AppliedUsage repeated() {
        return new AppliedUsage(true, Duration.ZERO, null);
    }
}
