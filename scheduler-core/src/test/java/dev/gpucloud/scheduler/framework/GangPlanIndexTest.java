package dev.gpucloud.scheduler.framework;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A gang planned from the fleet's per-leaf counts picks exactly the hosts, in rank order, that a scan
 * of every host picks: on random switch trees, occupancies, unhealthy hosts and request shapes.
 */
class GangPlanIndexTest {

    private static final int SEEDS = 150;

    private final PlacementFramework framework = new PlacementFramework(Profile.defaults());

    @Test
    void indexedPlanEqualsTheFullScanOnRandomFleets() {
        int planned = 0;
        for (int seed = 1; seed <= SEEDS; seed++) {
            Random random = new Random(seed);
            Fleet fleet = new Fleet();
            int h = 0;
            for (int f = 0; f < 1 + random.nextInt(3); f++) {
                for (int s = 0; s < 1 + random.nextInt(3); s++) {
                    for (int l = 0; l < 1 + random.nextInt(4); l++) {
                        for (int k = 0; k < 1 + random.nextInt(5); k++) {
                            TestFleet.HostBuilder b = host("h" + (h++)).leaf("f" + f, "s" + s, "l" + l)
                                    .islands(random.nextBoolean() ? 8 : 4);
                            if (random.nextInt(6) == 0) {
                                b.model("H100-SXM5-80GB", 81_920);
                            }
                            if (random.nextInt(8) == 0) {
                                b.cpu(16_000, 1_048_576);
                            }
                            b.add(fleet);
                        }
                    }
                }
            }
            host("nofabric").add(fleet);
            for (NodeState n : new ArrayList<>(fleet.nodes())) {
                int held = random.nextInt(12) - 3; // about a third of the hosts stay empty
                if (held > 0) {
                    List<Integer> gpus = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 6, 7));
                    Collections.shuffle(gpus, random);
                    fleet.reserve(Assignment.whole("held-" + n.id(), "x", "t", 0, n.id(),
                            gpus.subList(0, Math.min(8, held)).stream().sorted().toList(), 0, 0));
                }
                if (random.nextInt(15) == 0) {
                    fleet.drain(n.id(), true);
                }
            }
            for (int q = 0; q < 20; q++) {
                int workers = 2 + random.nextInt(12);
                int gpus = 1 + random.nextInt(8);
                Set<String> models = random.nextInt(4) == 0 ? Set.of("A100-SXM4-80GB") : Set.of();
                PlacementRequest r = new PlacementRequest("g" + seed + "-" + q, "t", 0, workers, gpus, null, 0,
                        random.nextInt(4) == 0 ? 8_000 : 0, 0, models, 0, true, random.nextInt(3) == 0,
                        CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
                List<List<NodeState>> plans = framework.gangPlans(fleet, r, NOW);
                assertThat(ids(plans.get(0))).as("seed %d request %s", seed, r).isEqualTo(ids(plans.get(1)));
                planned += plans.get(0).isEmpty() ? 0 : 1;
            }
        }
        assertThat(planned).as("plans found (the test must cover both outcomes)").isBetween(SEEDS * 20 / 12, SEEDS * 20 * 11 / 12);
    }

    @Test
    void aSingleLeafThatHoldsTheGangIsFoundWithoutLookingAtOtherLeaves() {
        Fleet fleet = new Fleet();
        for (int k = 0; k < 4; k++) {
            host("a" + k).leaf("f1", "s1", "la").add(fleet);
            host("b" + k).leaf("f1", "s1", "lb").add(fleet);
        }
        fleet.reserve(Assignment.whole("x", "x", "t", 0, "a0", List.of(0, 1, 2, 3), 0, 0));
        // la holds 3 whole hosts + a half, lb 4 whole hosts: the tightest single leaf for 3 x 8 GPUs is la
        Decision d = framework.place(fleet, PlacementRequest.whole("gang", 3, 8), NOW);
        assertThat(d.assignments()).extracting(Assignment::nodeId).containsExactly("a1", "a2", "a3");
    }

    private static List<String> ids(List<NodeState> nodes) {
        return nodes.stream().map(NodeState::id).toList();
    }
}
