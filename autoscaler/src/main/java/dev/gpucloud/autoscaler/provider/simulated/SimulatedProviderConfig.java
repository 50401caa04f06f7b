package dev.gpucloud.autoscaler.provider.simulated;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How the simulated cloud behaves. An instance is PENDING for {@code bootDelay} after its launch, then RUNNING;
 * each zone sells at most {@code spotGpusPerZone} spot GPUs at a time ({@code spotGpusByZone} overrides a zone);
 * every {@code priceStep} each type's spot price takes a step of at most {@code priceVolatility} (a fraction)
 * within {@code [0.2, 0.9]} of its on-demand price; a spot instance is reclaimed at
 * {@code interruptionsPerInstanceHour} (a Poisson rate). Everything random comes from {@code seed}.
 */
public record SimulatedProviderConfig(long seed, Duration bootDelay, int spotGpusPerZone,
        Map<String, Integer> spotGpusByZone, Duration priceStep, double priceVolatility,
        double interruptionsPerInstanceHour) {

    /** The lowest spot price, as a fraction of on demand. */
    public static final double MIN_SPOT_FRACTION = 0.2;
    /** The highest spot price, as a fraction of on demand. */
    public static final double MAX_SPOT_FRACTION = 0.9;

    public SimulatedProviderConfig {
        Objects.requireNonNull(bootDelay, "bootDelay");
        Objects.requireNonNull(priceStep, "priceStep");
        if (bootDelay.isNegative()) {
            throw new IllegalArgumentException("bootDelay must be >= 0, got " + bootDelay);
        }
        if (spotGpusPerZone < 0) {
            throw new IllegalArgumentException("spotGpusPerZone must be >= 0, got " + spotGpusPerZone);
        }
        spotGpusByZone = Map.copyOf(Objects.requireNonNull(spotGpusByZone, "spotGpusByZone (empty: none)"));
        spotGpusByZone.forEach((zone, gpus) -> {
            if (gpus < 0) {
                throw new IllegalArgumentException("spot GPUs of zone " + zone + " must be >= 0, got " + gpus);
            }
        });
        if (priceStep.isNegative() || priceStep.isZero()) {
            throw new IllegalArgumentException("priceStep must be positive, got " + priceStep);
        }
        if (!(priceVolatility >= 0 && priceVolatility <= 1)) {
            throw new IllegalArgumentException("priceVolatility must be within 0..1, got " + priceVolatility);
        }
        if (!(interruptionsPerInstanceHour >= 0) || Double.isInfinite(interruptionsPerInstanceHour)) {
            throw new IllegalArgumentException(
                    "interruptionsPerInstanceHour must be >= 0, got " + interruptionsPerInstanceHour);
        }
    }

    /**
     * 60 s to boot, 512 spot GPUs per zone, an hourly price step of up to 5 %, and 0.02 reclaims per spot
     * instance-hour (about one in 50 hours; AWS's Spot Instance Advisor puts most P3 pools in its 5-10 % a month
     * band and some above 20 %: an assumption, not a measurement).
     */
    public static SimulatedProviderConfig defaults(long seed) {
        return new SimulatedProviderConfig(seed, Duration.ofSeconds(60), 512, Map.of(), Duration.ofHours(1), 0.05,
                0.02);
    }

    /** The same with another boot delay. */
    public SimulatedProviderConfig withBootDelay(Duration d) {
        return new SimulatedProviderConfig(seed, d, spotGpusPerZone, spotGpusByZone, priceStep, priceVolatility,
                interruptionsPerInstanceHour);
    }

    /** The same with another reclaim rate. */
    public SimulatedProviderConfig withInterruptionRate(double perInstanceHour) {
        return new SimulatedProviderConfig(seed, bootDelay, spotGpusPerZone, spotGpusByZone, priceStep,
                priceVolatility, perInstanceHour);
    }

    /** The same with another spot capacity for every zone, and these zones overridden. */
    public SimulatedProviderConfig withSpotCapacity(int gpusPerZone, Map<String, Integer> byZone) {
        return new SimulatedProviderConfig(seed, bootDelay, gpusPerZone, byZone, priceStep, priceVolatility,
                interruptionsPerInstanceHour);
    }

    /** The spot GPUs a zone sells at a time. */
    public int spotGpus(String zone) {
        return spotGpusByZone.getOrDefault(zone, spotGpusPerZone);
    }
}
