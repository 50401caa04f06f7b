package dev.gpucloud.autoscaler.core;

import java.util.List;
import java.util.Objects;

/**
 * A kind of host a provider sells: its GPUs (all of one model), whether multi-host gangs can run on it over an RDMA
 * fabric (EFA with GPUDirect RDMA on AWS), its hourly prices, and the zones that offer it. {@code spotUsdPerHour} is
 * NaN where the type is not sold as spot.
 */
public record InstanceType(
        String name,
        String gpuModel,
        int gpus,
        boolean rdma,
        double onDemandUsdPerHour,
        double spotUsdPerHour,
        List<String> zones) {

    public InstanceType {
        requireText(name, "name", name);
        requireText(gpuModel, "gpuModel", name);
        if (gpus < 1) {
            throw new IllegalArgumentException("gpus of " + name + " must be at least 1, got " + gpus);
        }
        if (Double.isNaN(onDemandUsdPerHour) || onDemandUsdPerHour < 0 || Double.isInfinite(onDemandUsdPerHour)) {
            throw new IllegalArgumentException(
                    "onDemandUsdPerHour of " + name + " must be a price >= 0, got " + onDemandUsdPerHour);
        }
        if (spotUsdPerHour < 0 || Double.isInfinite(spotUsdPerHour)) {
            throw new IllegalArgumentException(
                    "spotUsdPerHour of " + name + " must be a price >= 0 or NaN (no spot), got " + spotUsdPerHour);
        }
        Objects.requireNonNull(zones, "zones of " + name);
        zones = List.copyOf(zones);
    }

    /** A type sold on demand only. */
    public static InstanceType onDemandOnly(String name, String gpuModel, int gpus, boolean rdma, double usdPerHour,
            List<String> zones) {
        return new InstanceType(name, gpuModel, gpus, rdma, usdPerHour, Double.NaN, zones);
    }

    /** Whether the provider sells this type as spot capacity. */
    public boolean offersSpot() {
        return !Double.isNaN(spotUsdPerHour);
    }

    /** The hourly price of one host bought as {@code capacity}; NaN for spot where the type has none. */
    public double usdPerHour(Capacity capacity) {
        return capacity == Capacity.SPOT ? spotUsdPerHour : onDemandUsdPerHour;
    }

    /**
     * Whether a job that accepts {@code model} can run on this type's GPUs: the full name ({@code A100-SXM4-80GB}),
     * or its family before a dash ({@code A100} accepts both A100 variants, {@code L4} does not accept {@code L40S}).
     */
    public boolean hasModel(String model) {
        if (gpuModel.equalsIgnoreCase(model)) {
            return true;
        }
        int n = model.length();
        return gpuModel.length() > n && gpuModel.charAt(n) == '-' && gpuModel.regionMatches(true, 0, model, 0, n);
    }

    private static void requireText(String value, String field, String type) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " of instance type " + type + " is missing");
        }
    }
}
