package dev.gpucloud.billing.fold.advisor;

import dev.gpucloud.billing.fold.BillingPolicy;
import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.InvoiceCalculator;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.MicroUsd;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.ReservedCommitment;
import dev.gpucloud.billing.fold.SkuRate;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a tenant's month would have cost on demand, with spot for its spot-tolerant usage, and with the best
 * reserved commitment per SKU for the rest. Every figure is an invoice the {@link InvoiceCalculator} computes
 * from the same usage, so it is exact to the micro-USD under the stated assumptions.
 *
 * <p>The commitment level of a SKU is searched over its usage: with U_m the SKU-seconds used in month m of the
 * history, committing H hours costs sum over m of (H x reserved rate + max(0, U_m - 3600 H) x on-demand rate).
 * That is piecewise linear in H with its bends at U_m / 3600, so the cheapest whole H is 0 or the floor or
 * ceiling of one of them; all are tried, the cheapest (then the smallest) wins.
 */
public final class CostAdvisor {

    private final BillingPolicy policy;
    private final PriceCatalog catalog;
    private final List<ReservedCommitment> configured;
    private final AdvisorAssumptions assumptions;

    public CostAdvisor(BillingPolicy policy, PriceCatalog catalog, List<ReservedCommitment> configured,
            AdvisorAssumptions assumptions) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.configured = List.copyOf(configured);
        this.assumptions = Objects.requireNonNull(assumptions, "assumptions");
    }

    /**
     * Advice for {@code month} from {@code history}: the tenant's allocations per month (each with its usage up
     * to that month's end); the advised month must be in it, earlier months choose the commitment level.
     */
    public CostAdvice advise(String tenant, YearMonth month, Map<YearMonth, List<MeteredAllocation>> history) {
        List<MeteredAllocation> allocations = history.getOrDefault(month, List.of());
        Instant start = Interval.month(month).from();
        PriceCatalog withSpot = spotPrices(allocations);
        long billed = new InvoiceCalculator(policy, catalog, configured).invoice(tenant, month, allocations).totalMicros();
        long onDemand = new InvoiceCalculator(policy, catalog)
                .invoice(tenant, month, as(allocations, false)).totalMicros();
        List<MeteredAllocation> spotPlan = as(allocations, true);
        long spot = new InvoiceCalculator(policy, withSpot).invoice(tenant, month, spotPlan).totalMicros();
        long spotSeconds = 0;
        for (MeteredAllocation allocation : spotPlan) {
            if (allocation.capacityType() == CapacityType.SPOT) {
                spotSeconds += policy.billedSecondsIn(allocation, month) * allocation.units();
            }
        }

        Map<String, Sku> skus = new TreeMap<>();
        for (MeteredAllocation allocation : spotPlan) {
            if (allocation.capacityType() != CapacityType.SPOT) {
                skus.put(allocation.sku().code(), allocation.sku());
            }
        }
        // months before the tenant's first usage say nothing about what it needs
        YearMonth firstUsed = history.entrySet().stream().filter(e -> !e.getValue().isEmpty()).map(Map.Entry::getKey)
                .min(YearMonth::compareTo).orElse(month);
        List<CommitmentAdvice> advice = new ArrayList<>();
        List<ReservedCommitment> best = new ArrayList<>();
        for (Sku sku : skus.values()) {
            SkuRate od = catalog.rate(sku, CapacityType.ON_DEMAND, start);
            if (od.isHeld()) {
                continue; // nothing to compare against until the catalog prices it
            }
            long reserved = reservedRate(sku, start, od.microsPerHour());
            List<Long> used = new ArrayList<>();
            long thisMonth = 0;
            for (int back = assumptions.historyMonths() - 1; back >= 0; back--) {
                YearMonth m = month.minusMonths(back);
                long seconds = 0;
                for (MeteredAllocation allocation : as(history.getOrDefault(m, List.of()), true)) {
                    if (allocation.capacityType() != CapacityType.SPOT && allocation.sku().code().equals(sku.code())) {
                        seconds += policy.billedSecondsIn(allocation, m) * allocation.units();
                    }
                }
                if (!m.isBefore(firstUsed)) {
                    used.add(seconds);
                }
                if (back == 0) {
                    thisMonth = seconds;
                }
            }
            long hours = bestHours(used, reserved, od.microsPerHour());
            advice.add(new CommitmentAdvice(sku.code(), hours, reserved, od.microsPerHour(), thisMonth, used.size(),
                    cost(used, 0, reserved, od.microsPerHour()), cost(used, hours, reserved, od.microsPerHour())));
            if (hours > 0) {
                best.add(new ReservedCommitment(tenant, sku.code(), hours, reserved, month, month));
            }
        }
        long bestTotal = new InvoiceCalculator(policy, withSpot, best).invoice(tenant, month, spotPlan).totalMicros();
        return new CostAdvice(tenant, month, billed, onDemand, spot, bestTotal, spotSeconds, advice,
                assumptions.describe());
    }

    /** The cheapest whole number of committed SKU-hours a month for these monthly usages (SKU-seconds). */
    static long bestHours(List<Long> usedSeconds, long reservedRate, long onDemandRate) {
        TreeSet<Long> candidates = new TreeSet<>();
        candidates.add(0L);
        for (long seconds : usedSeconds) {
            candidates.add(seconds / 3600);
            candidates.add((seconds + 3599) / 3600);
        }
        long bestHours = 0;
        long bestCost = Long.MAX_VALUE;
        for (long hours : candidates) {
            long cost = cost(usedSeconds, hours, reservedRate, onDemandRate);
            if (cost < bestCost) {
                bestCost = cost;
                bestHours = hours;
            }
        }
        return bestHours;
    }

    /** What committing {@code hours} a month costs over these months, the usage beyond it on demand. */
    static long cost(List<Long> usedSeconds, long hours, long reservedRate, long onDemandRate) {
        long committed = Math.multiplyExact(hours, 3600L);
        long total = 0;
        for (long seconds : usedSeconds) {
            total = Math.addExact(total, MicroUsd.forSeconds(committed, reservedRate));
            total = Math.addExact(total, MicroUsd.forSeconds(Math.max(0, seconds - committed), onDemandRate));
        }
        return total;
    }

    private long reservedRate(Sku sku, Instant at, long onDemandRate) {
        SkuRate listed = catalog.rate(sku, CapacityType.RESERVED, at);
        if (!listed.isFlagged()) {
            return listed.microsPerHour();
        }
        return Math.round(onDemandRate * (assumptions.reservedPricePercent() / 100.0));
    }

    /** The catalog with an assumed SPOT price for every used model that has none. */
    private PriceCatalog spotPrices(List<MeteredAllocation> allocations) {
        PriceCatalog result = catalog;
        for (MeteredAllocation allocation : allocations) {
            String model = allocation.sku().gpuModel();
            if (catalog.gpuHourPrice(model, CapacityType.SPOT).isEmpty()) {
                var onDemand = catalog.gpuHourPrice(model, CapacityType.ON_DEMAND);
                if (onDemand.isPresent()) {
                    result = result.withPrice(model, CapacityType.SPOT,
                            Math.round(onDemand.get() * (assumptions.spotPricePercent() / 100.0)));
                }
            }
        }
        return result;
    }

    /**
     * The allocations as a plan prices them: with {@code spot}, spot-tolerant ones on SPOT and the rest
     * ON_DEMAND; without, all ON_DEMAND.
     */
    private List<MeteredAllocation> as(List<MeteredAllocation> allocations, boolean spot) {
        List<MeteredAllocation> planned = new ArrayList<>();
        for (MeteredAllocation a : allocations) {
            boolean tolerant = a.capacityType() == CapacityType.SPOT
                    || assumptions.spotEligibleJobs().matcher(a.jobId()).matches();
            CapacityType type = spot && tolerant ? CapacityType.SPOT : CapacityType.ON_DEMAND;
            planned.add(new MeteredAllocation(a.allocationId(), a.tenant(), a.jobId(), a.sku(), a.units(), type,
                    a.usage()));
        }
        return planned;
    }
}
