package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;

/** Short builders for the fold's tests: seconds after a fixed instant, allocations, events. */
final class Usage {

    /** 2025-06-10T00:00:00Z, the middle of a month. */
    static final Instant T0 = Instant.parse("2025-06-10T00:00:00Z");
    static final YearMonth JUNE = YearMonth.of(2025, 6);
    static final YearMonth MAY = YearMonth.of(2025, 5);

    private Usage() {
    }

    /** [T0 + fromSeconds, T0 + toSeconds). */
    static Interval iv(double fromSeconds, double toSeconds) {
        return Interval.of(at(fromSeconds), at(toSeconds));
    }

    static Instant at(double seconds) {
        return T0.plusNanos(Math.round(seconds * 1e9));
    }

    static Interval iv(String from, String to) {
        return Interval.of(Instant.parse(from), Instant.parse(to));
    }

    static IntervalUnion union(Interval... intervals) {
        return IntervalUnion.of(intervals);
    }

    static MeteredAllocation mkAllocation(String id, String job, Sku sku, int units, CapacityType type,
            Interval... usage) {
        return new MeteredAllocation(id, "acme", job, sku, units, type, IntervalUnion.of(usage));
    }

    static MeteredAllocation mkA100(String id, String job, Interval... usage) {
        return mkAllocation(id, job, Sku.wholeGpu(GpuModels.A100_SXM4_40GB), 1, CapacityType.ON_DEMAND, usage);
    }

    static UsageEvent mkEvent(String allocation, String tenant, Interval interval) {
        return new UsageEvent(allocation, "job-1", tenant, "node-1", interval.from(), interval.to(),
                Sku.wholeGpu(GpuModels.A100_SXM4_40GB), 1, CapacityType.ON_DEMAND, "us-east-1a");
    }

    /** Every ordering of a list. */
    static <T> List<List<T>> permutations(List<T> items) {
        if (items.isEmpty()) {
            return List.of(List.of());
        }
        List<List<T>> result = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            List<T> rest = new ArrayList<>(items);
            T head = rest.remove(i);
            for (List<T> tail : permutations(rest)) {
                List<T> permutation = new ArrayList<>();
                permutation.add(head);
                permutation.addAll(tail);
                result.add(permutation);
            }
        }
        return result;
    }
}
