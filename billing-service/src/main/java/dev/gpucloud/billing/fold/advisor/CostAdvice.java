package dev.gpucloud.billing.fold.advisor;

import java.time.YearMonth;
import java.util.List;

/**
 * A tenant's month priced four ways: as billed, all on demand, with spot-tolerant usage on spot, and with
 * spot plus the best commitment per SKU for the rest. Amounts in micro-USD.
 */
public record CostAdvice(
        String tenant,
        YearMonth month,
        long billedMicros,
        long onDemandMicros,
        long withSpotMicros,
        long bestMicros,
        long spotTolerantSeconds,
        List<CommitmentAdvice> commitments,
        List<String> assumptions) {

    public CostAdvice {
        commitments = List.copyOf(commitments);
        assumptions = List.copyOf(assumptions);
    }
}
