package dev.gpucloud.billing.fold;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.UsageEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One allocation as billing sees it: whose it is, what it holds ({@code units} of {@code sku} bought as
 * {@code capacityType}) and the union of its reported usage. The dimensions are fixed by the first report;
 * a later report that disagrees is refused rather than billed to someone.
 */
public record MeteredAllocation(
        String allocationId,
        String tenant,
        String jobId,
        Sku sku,
        int units,
        CapacityType capacityType,
        IntervalUnion usage) {

    public MeteredAllocation {
        Objects.requireNonNull(allocationId, "allocationId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(sku, "sku");
        Objects.requireNonNull(capacityType, "capacityType");
        Objects.requireNonNull(usage, "usage");
        if (units < 1) {
            throw new IllegalArgumentException("units must be >= 1, was " + units);
        }
    }

    /** The allocation a first report describes, holding that report's interval. */
    public static MeteredAllocation from(UsageEvent event) {
        return new MeteredAllocation(event.allocationId(), event.tenant(), event.jobId(), event.sku(),
                event.units(), event.capacityType(), IntervalUnion.of(Interval.of(event.from(), event.to())));
    }

    /** The same allocation with more usage. */
    public MeteredAllocation with(Interval interval) {
        return new MeteredAllocation(allocationId, tenant, jobId, sku, units, capacityType, usage.with(interval));
    }

    /** The same allocation with its usage replaced. */
    public MeteredAllocation withUsage(IntervalUnion newUsage) {
        return new MeteredAllocation(allocationId, tenant, jobId, sku, units, capacityType, newUsage);
    }

    /** Why {@code event} cannot be usage of this allocation (it names other dimensions), if it cannot. */
    public Optional<String> conflictWith(UsageEvent event) {
        List<String> differences = new ArrayList<>();
        differ(differences, "allocationId", allocationId, event.allocationId());
        differ(differences, "tenant", tenant, event.tenant());
        differ(differences, "jobId", jobId, event.jobId());
        differ(differences, "sku", sku.code(), event.sku().code());
        differ(differences, "units", units, event.units());
        differ(differences, "capacityType", capacityType, event.capacityType());
        if (differences.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("usage of allocation '" + allocationId + "' conflicts with its first report: "
                + String.join(", ", differences));
    }

    private static void differ(List<String> differences, String field, Object known, Object reported) {
        if (!Objects.equals(known, reported)) {
            differences.add("field '" + field + "' was '" + known + "', now '" + reported + "'");
        }
    }
}
