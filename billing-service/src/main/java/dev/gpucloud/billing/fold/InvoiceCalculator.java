package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Rates a tenant's allocations for one month: each allocation's billed seconds in the month (see
 * {@link BillingPolicy}) times its units, summed per (job, SKU, capacity type), times that SKU's rate
 * from the {@link PriceCatalog}. A line's amount is rounded half-even to the micro-USD once, from its
 * total seconds; the invoice total is the sum of its lines.
 */
public final class InvoiceCalculator {

    private static final Comparator<LineKey> LINE_ORDER = Comparator.comparing(LineKey::jobId)
            .thenComparing(k -> k.sku().code())
            .thenComparing(LineKey::capacityType);

    private final BillingPolicy policy;
    private final PriceCatalog catalog;

    public InvoiceCalculator(BillingPolicy policy, PriceCatalog catalog) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
    }

    /**
     * The invoice of {@code tenant} for {@code month}; every allocation passed must be the tenant's, with
     * its usage at least up to the month's end (earlier months decide how much of the minimum is left).
     */
    public Invoice invoice(String tenant, YearMonth month, Collection<MeteredAllocation> allocations) {
        Map<LineKey, Long> seconds = new TreeMap<>(LINE_ORDER);
        for (MeteredAllocation allocation : allocations) {
            if (!allocation.tenant().equals(tenant)) {
                throw new IllegalArgumentException("allocation '" + allocation.allocationId() + "' of tenant '"
                        + allocation.tenant() + "' cannot be on an invoice of tenant '" + tenant + "'");
            }
            long billed = policy.billedSecondsIn(allocation.usage(), month);
            if (billed == 0) {
                continue;
            }
            LineKey key = new LineKey(allocation.jobId(), allocation.sku(), allocation.capacityType());
            seconds.merge(key, Math.multiplyExact(billed, allocation.units()), Math::addExact);
        }
        List<InvoiceLine> lines = new ArrayList<>();
        seconds.forEach((key, skuSeconds) -> {
            SkuRate rate = catalog.rate(key.sku(), key.capacityType());
            lines.add(new InvoiceLine(key.jobId(), key.sku().code(), key.capacityType(), skuSeconds,
                    rate.microsPerHour(), MicroUsd.forSeconds(skuSeconds, rate.microsPerHour()), rate.flag()));
        });
        return new Invoice(tenant, month, lines);
    }

    public BillingPolicy policy() {
        return policy;
    }

    public PriceCatalog catalog() {
        return catalog;
    }

    private record LineKey(String jobId, Sku sku, CapacityType capacityType) {
    }
}
