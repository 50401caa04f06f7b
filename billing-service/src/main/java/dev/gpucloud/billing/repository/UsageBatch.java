package dev.gpucloud.billing.repository;

import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.UsageEvent;
import java.util.List;

/** What one batch of decoded usage events did: per event, applied (or a repeat), or refused with the reason. */
public record UsageBatch(List<Applied> applied, List<Refused> refused) {

    /** A decoded usage event and where it was read. */
    public record Item(Envelope<UsageEvent> envelope, RecordOrigin origin) {
    }

    public record Applied(Item item, AppliedUsage usage) {
    }

    public record Refused(Item item, String reason) {
    }

    public UsageBatch {
        applied = List.copyOf(applied);
        refused = List.copyOf(refused);
    }
}
