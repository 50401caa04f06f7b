package dev.gpucloud.autoscaler.provider.simulated;

import dev.gpucloud.autoscaler.core.InstanceType;
import java.util.Random;

/**
 * One type's spot price over time: it starts at the catalog's spot price and, at every price step since time 0,
 * moves by a uniform fraction of at most the volatility, held within 0.2..0.9 of the on-demand price. Each type's
 * walk has its own generator, seeded from the provider's seed and the type's name, so asking about one type never
 * changes another's prices.
 */
final class SpotPriceWalk {

    private final double onDemand;
    private final long stepMillis;
    private final double volatility;
    private final Random random;
    private double fraction;
    private long step;

    SpotPriceWalk(InstanceType type, SimulatedProviderConfig config) {
        this.onDemand = type.onDemandUsdPerHour();
        this.stepMillis = config.priceStep().toMillis();
        this.volatility = config.priceVolatility();
        this.random = new Random(config.seed() * 1_000_003L + type.name().hashCode());
        this.fraction = clamp(onDemand > 0 ? type.spotUsdPerHour() / onDemand : SimulatedProviderConfig.MIN_SPOT_FRACTION);
    }

    /** The price at {@code nowMillis}; the walk only moves forward. */
    double at(long nowMillis) {
        long target = Math.max(0, nowMillis) / stepMillis;
        while (step < target) {
            fraction = clamp(fraction * (1 + (random.nextDouble() * 2 - 1) * volatility));
            step++;
        }
        return onDemand * fraction;
    }

    private static double clamp(double f) {
        return Math.max(SimulatedProviderConfig.MIN_SPOT_FRACTION, Math.min(SimulatedProviderConfig.MAX_SPOT_FRACTION, f));
    }
}
