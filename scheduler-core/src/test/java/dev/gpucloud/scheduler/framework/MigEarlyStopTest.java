package dev.gpucloud.scheduler.framework;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.plugins.DataLocalityScore;
import dev.gpucloud.scheduler.framework.plugins.SpotCostScore;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A MIG decision stops visiting hosts once no later one can outscore the best (hosts come fullest
 * first and Packing scores that fullness); it places exactly where scoring the first feasible hosts
 * would, whatever the prices, cached datasets and health of the hosts.
 */
class MigEarlyStopTest {

    private static final String[] PROFILES = {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};

    private static Fleet fleet(int seed) {
        Random random = new Random(seed);
        Fleet fleet = new Fleet();
        for (int h = 0; h < 30; h++) {
            TestFleet.HostBuilder b = host("m" + h).mig().gpus(seed % 2 == 0 ? 8 : 1 + random.nextInt(8))
                    .price(seed % 2 == 0 ? 32_000_000L : 8_000_000L * (1 + random.nextInt(5))); // even: one price
            if (seed % 2 == 1 && random.nextInt(4) == 0) {
                b.datasets("imagenet");
            }
            b.add(fleet);
            if (random.nextInt(10) == 0) {
                fleet.drain("m" + h, true);
            }
        }
        return fleet;
    }

    @Test
    void withOnePriceAndNoDatasetTheBoundIsThePackingScoreAlone() {
        Fleet fleet = fleet(2);
        PlacementRequest r = new PlacementRequest("j", "t", 0, 1, 0, "1g.10gb", 0, 0, 0, Set.of(), 0, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
        CycleState state = new CycleState(fleet, NOW, Profile.defaults());
        assertThat(new SpotCostScore().maxScore(state, r)).isZero();
        assertThat(new DataLocalityScore().maxScore(state, r)).isZero();
        PlacementRequest withData = new PlacementRequest("j", "t", 0, 1, 0, "1g.10gb", 0, 0, 0, Set.of(), 0, false,
                false, CapacityPreference.ON_DEMAND, 0, "imagenet", Set.of(), PriorityClass.NORMAL);
        assertThat(new DataLocalityScore().maxScore(state, withData))
                .isEqualTo(100);
    }

    @Test
    void stoppingEarlyPlacesWhereScoringEveryCandidateWould() {
        PlacementFramework early = new PlacementFramework(Profile.defaults());
        PlacementFramework full = new PlacementFramework(Profile.defaults());
        full.stopEarly = false;
        int placed = 0;
        for (int seed = 1; seed <= 20; seed++) {
            Fleet fleet = fleet(seed);
            Fleet twin = fleet(seed); // the same hosts, for the framework that scores every candidate
            Random random = new Random(-seed);
            for (int j = 0; j < 500; j++) {
                PlacementRequest r = new PlacementRequest("j" + seed + "-" + j, "t", 0, 1, 0,
                        PROFILES[random.nextInt(PROFILES.length)], 0, 0, 0, Set.of(), 0, false, false,
                        CapacityPreference.ON_DEMAND, 0, seed % 2 == 1 && random.nextBoolean() ? "imagenet" : null, Set.of(),
                        PriorityClass.NORMAL);
                Decision expected = full.place(twin, r, NOW);
                Decision actual = early.place(fleet, r, NOW);
                assertThat(actual.assignments()).as("seed %d job %d", seed, j).isEqualTo(expected.assignments());
                placed += actual.isPlaced() ? 1 : 0;
            }
        }
        assertThat(placed).as("placed of 10,000 (the fleets must fill up)").isBetween(2000, 9500);
    }
}
