package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Rates a tenant's allocations for one month: each allocation's billed seconds in the month (see
 * {@link BillingPolicy}) are cut at every price change of its SKU and capacity type in the month (see
 * {@link PriceCatalog#periods}), times its units, summed per (job, SKU, capacity type, price period), times
 * that period's rate. Where the tenant holds a {@link ReservedCommitment} for a SKU, its on-demand and
 * reserved usage of that SKU fills the committed hours first, in the order it happened, and the rest is
 * on-demand; unused committed hours are a line of their own. A line's amount is rounded half-even to the
 * micro-USD once, from its total seconds; the invoice total is the sum of its lines.
 */
public final class InvoiceCalculator {

    private static final Comparator<LineKey> LINE_ORDER = Comparator.comparing(LineKey::jobId)
            .thenComparing(LineKey::sku)
            .thenComparing(LineKey::capacityType)
            .thenComparing(LineKey::periodFrom);

    private final BillingPolicy policy;
    private final PriceCatalog catalog;
    private final List<ReservedCommitment> commitments;

    public InvoiceCalculator(BillingPolicy policy, PriceCatalog catalog) {
        this(policy, catalog, List.of());
    }

    /** A calculator that also applies commitments; two that commit the same tenant and SKU in one month are refused. */
    public InvoiceCalculator(BillingPolicy policy, PriceCatalog catalog, List<ReservedCommitment> commitments) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.commitments = List.copyOf(commitments);
        for (int i = 0; i < this.commitments.size(); i++) {
            for (int j = i + 1; j < this.commitments.size(); j++) {
                if (this.commitments.get(i).overlaps(this.commitments.get(j))) {
                    throw new IllegalArgumentException("commitments " + this.commitments.get(i) + " and "
                            + this.commitments.get(j) + " overlap: one tenant has one commitment per SKU and month");
                }
            }
        }
    }

    /**
     * The invoice of {@code tenant} for {@code month}; every allocation passed must be the tenant's, with
     * its usage at least up to the month's end (earlier months decide how much of the minimum is left).
     */
    public Invoice invoice(String tenant, YearMonth month, Collection<MeteredAllocation> allocations) {
        Interval window = Interval.month(month);
        Map<String, ReservedCommitment> committed = new TreeMap<>();
        for (ReservedCommitment commitment : commitments) {
            if (commitment.covers(tenant, commitment.sku(), month)) {
                committed.put(commitment.sku(), commitment);
            }
        }
        Lines lines = new Lines();
        Map<Priced, List<PricePeriod>> periodsBySku = new HashMap<>();
        Map<String, List<MeteredAllocation>> underCommitment = new TreeMap<>();
        for (MeteredAllocation allocation : allocations) {
            if (!allocation.tenant().equals(tenant)) {
                throw new IllegalArgumentException("allocation '" + allocation.allocationId() + "' of tenant '"
                        + allocation.tenant() + "' cannot be on an invoice of tenant '" + tenant + "'");
            }
            if (committed.containsKey(allocation.sku().code()) && allocation.capacityType() != CapacityType.SPOT) {
                underCommitment.computeIfAbsent(allocation.sku().code(), ignored -> new ArrayList<>()).add(allocation);
                continue;
            }
            List<PricePeriod> periods = periods(periodsBySku, allocation.sku(), allocation.capacityType(), window);
            for (PricePeriod period : periods) {
                long billed = policy.billedSecondsIn(allocation, period.span());
                if (billed > 0) {
                    lines.add(allocation.jobId(), allocation.sku().code(), allocation.capacityType(), period,
                            periods.size() > 1, Math.multiplyExact(billed, allocation.units()));
                }
            }
        }
        for (ReservedCommitment commitment : committed.values()) {
            applyCommitment(commitment, underCommitment.getOrDefault(commitment.sku(), List.of()), window,
                    periodsBySku, lines);
        }
        return new Invoice(tenant, month, lines.toInvoiceLines());
    }

    /**
     * Cuts the month at every usage boundary and on-demand price change of the SKU, so each slice of each
     * allocation is either wholly used or not, then fills the committed seconds slice by slice in time
     * order (allocations in the same slice by job, then allocation id).
     */
    private void applyCommitment(ReservedCommitment commitment, List<MeteredAllocation> allocations, Interval window,
            Map<Priced, List<PricePeriod>> periodsBySku, Lines lines) {
        long remaining = commitment.secondsPerMonth();
        PricePeriod reservedRate = new PricePeriod(window, SkuRate.priced(commitment.microsPerHour()));
        if (!allocations.isEmpty()) {
            List<PricePeriod> onDemand = periods(periodsBySku, allocations.get(0).sku(), CapacityType.ON_DEMAND, window);
            TreeSet<Instant> cuts = new TreeSet<>();
            onDemand.forEach(period -> cuts.add(period.span().from()));
            cuts.add(window.to());
            for (MeteredAllocation allocation : allocations) {
                for (Interval used : allocation.usage().within(window).intervals()) {
                    cuts.add(used.from());
                    cuts.add(used.to());
                }
            }
            List<Slice> slices = new ArrayList<>();
            for (MeteredAllocation allocation : allocations) {
                for (Interval used : allocation.usage().within(window).intervals()) {
                    NavigableSet<Instant> inside = cuts.subSet(used.from(), true, used.to(), true);
                    Instant from = null;
                    for (Instant to : inside) {
                        if (from != null) {
                            long billed = policy.billedSecondsIn(allocation, Interval.of(from, to));
                            if (billed > 0) {
                                slices.add(new Slice(from, allocation, Math.multiplyExact(billed, allocation.units())));
                            }
                        }
                        from = to;
                    }
                }
            }
            slices.sort(Comparator.comparing(Slice::from)
                    .thenComparing(slice -> slice.allocation().jobId())
                    .thenComparing(slice -> slice.allocation().allocationId()));
            for (Slice slice : slices) {
                long reserved = Math.min(remaining, slice.seconds());
                remaining -= reserved;
                String job = slice.allocation().jobId();
                if (reserved > 0) {
                    lines.add(job, commitment.sku(), CapacityType.RESERVED, reservedRate, false, reserved);
                }
                if (slice.seconds() > reserved) {
                    PricePeriod period = onDemand.stream().filter(p -> !p.span().from().isAfter(slice.from()))
                            .reduce((first, second) -> second).orElseThrow();
                    lines.add(job, commitment.sku(), CapacityType.ON_DEMAND, period, onDemand.size() > 1,
                            slice.seconds() - reserved);
                }
            }
        }
        if (remaining > 0) {
            lines.add(ReservedCommitment.UNUSED, commitment.sku(), CapacityType.RESERVED, reservedRate, false, remaining);
        }
    }

    private List<PricePeriod> periods(Map<Priced, List<PricePeriod>> cache, Sku sku, CapacityType type,
            Interval window) {
        return cache.computeIfAbsent(new Priced(sku, type), priced -> catalog.periods(sku, type, window));
    }

    public BillingPolicy policy() {
        return policy;
    }

    public PriceCatalog catalog() {
        return catalog;
    }

    public List<ReservedCommitment> commitments() {
        return commitments;
    }

    /** The lines of one invoice as they are summed: SKU-seconds per key, and the rate of each key. */
    private static final class Lines {
        private final Map<LineKey, Long> seconds = new TreeMap<>(LINE_ORDER);
        private final Map<LineKey, SkuRate> rates = new HashMap<>();

        void add(String jobId, String sku, CapacityType type, PricePeriod period, boolean priceChangedInMonth,
                long skuSeconds) {
            Instant rateFrom = priceChangedInMonth ? period.span().from() : null;
            LineKey key = new LineKey(jobId, sku, type, period.span().from(), rateFrom);
            seconds.merge(key, skuSeconds, Math::addExact);
            rates.put(key, period.rate());
        }

        List<InvoiceLine> toInvoiceLines() {
            List<InvoiceLine> lines = new ArrayList<>();
            seconds.forEach((key, skuSeconds) -> {
                SkuRate rate = rates.get(key);
                lines.add(new InvoiceLine(key.jobId(), key.sku(), key.capacityType(), skuSeconds,
                        rate.microsPerHour(), MicroUsd.forSeconds(skuSeconds, rate.microsPerHour()), rate.flag(),
                        key.rateFrom()));
            });
            return lines;
        }
    }

    private record Priced(Sku sku, CapacityType capacityType) {
    }

    private record Slice(Instant from, MeteredAllocation allocation, long seconds) {
    }

    /** {@code rateFrom} is null when one rate held all month; {@code periodFrom} orders the lines. */
    private record LineKey(String jobId, String sku, CapacityType capacityType, Instant periodFrom, Instant rateFrom) {
    }
}
