package dev.gpucloud.autoscaler.core;

import java.util.Objects;
import java.util.Set;

/**
 * What one pool may grow to: between {@code minHosts} and {@code maxHosts} hosts, at most {@code maxUsdPerHour}
 * for all its hosts together (infinite: no budget; 0: no launches), at most {@code maxLaunchesPerMinute} hosts
 * launched in any minute, and only the catalog's {@code instanceTypes} named here (empty: any type).
 */
public record PoolLimits(int minHosts, int maxHosts, double maxUsdPerHour, int maxLaunchesPerMinute,
        Set<String> instanceTypes) {

    public PoolLimits {
        if (minHosts < 0) {
            throw new IllegalArgumentException("minHosts must be >= 0, got " + minHosts);
        }
        if (maxHosts < minHosts) {
            throw new IllegalArgumentException("maxHosts " + maxHosts + " is below minHosts " + minHosts);
        }
        if (Double.isNaN(maxUsdPerHour) || maxUsdPerHour < 0) {
            throw new IllegalArgumentException(
                    "maxUsdPerHour must be >= 0 (Infinity: no budget), got " + maxUsdPerHour);
        }
        if (maxLaunchesPerMinute < 0) {
            throw new IllegalArgumentException("maxLaunchesPerMinute must be >= 0, got " + maxLaunchesPerMinute);
        }
        Objects.requireNonNull(instanceTypes, "instanceTypes (empty: any type)");
        instanceTypes = Set.copyOf(instanceTypes);
    }

    /** Limits on hosts, budget and launch rate, any catalog type. */
    public static PoolLimits of(int minHosts, int maxHosts, double maxUsdPerHour, int maxLaunchesPerMinute) {
        return new PoolLimits(minHosts, maxHosts, maxUsdPerHour, maxLaunchesPerMinute, Set.of());
    }

    /** No limit but the JDK's: for tests and the simulator. */
    public static PoolLimits unlimited() {
        return of(0, Integer.MAX_VALUE, Double.POSITIVE_INFINITY, Integer.MAX_VALUE);
    }

    /** The same limits, restricted to these catalog types. */
    public PoolLimits withInstanceTypes(Set<String> types) {
        return new PoolLimits(minHosts, maxHosts, maxUsdPerHour, maxLaunchesPerMinute, types);
    }

    /** Whether the pool may use the type. */
    public boolean allows(String instanceType) {
        return instanceTypes.isEmpty() || instanceTypes.contains(instanceType);
    }
}
