package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.time.Instant;

/**
 * One interval {@code [from, to)} during which an allocation held {@code units} of {@code sku}, on
 * {@code usage.events} keyed by allocationId. Reports may repeat or overlap; billing counts the union
 * of an allocation's intervals once.
 */
public record UsageEvent(
        String allocationId,
        String jobId,
        String tenant,
        String nodeId,
        Instant from,
        Instant to,
        Sku sku,
        int units,
        CapacityType capacityType,
        String zone) {

    public UsageEvent {
        Check.text(allocationId, Limits.ID, "allocationId");
        Check.text(jobId, Limits.ID, "jobId");
        Tenants.require(tenant, "tenant");
        Check.text(nodeId, Limits.ID, "nodeId");
        Require.present(from, "from");
        Require.present(to, "to");
        if (!to.isAfter(from)) {
            throw new IllegalArgumentException("field 'to' must be after 'from', was " + from + " .. " + to);
        }
        Require.present(sku, "sku");
        Check.number(units, Limits.UNITS, "units");
        Require.present(capacityType, "capacityType");
        Check.text(zone, Limits.LABEL_TEXT, "zone");
    }
}
