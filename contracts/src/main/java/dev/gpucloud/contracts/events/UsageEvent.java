package dev.gpucloud.contracts.events;

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
        Require.text(allocationId, "allocationId");
        Require.text(jobId, "jobId");
        Tenants.require(tenant, "tenant");
        Require.text(nodeId, "nodeId");
        Require.present(from, "from");
        Require.present(to, "to");
        if (!to.isAfter(from)) {
            throw new IllegalArgumentException("field 'to' must be after 'from', was " + from + " .. " + to);
        }
        Require.present(sku, "sku");
        Require.atLeast(units, 1, "units");
        Require.present(capacityType, "capacityType");
        Require.text(zone, "zone");
    }
}
