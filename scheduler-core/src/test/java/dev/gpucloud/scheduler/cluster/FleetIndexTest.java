package dev.gpucloud.scheduler.cluster;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.scheduler.framework.TestFleet;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The fleet's kept indexes (free-GPU buckets, hosts by free MIG placement per profile, per-leaf
 * counts of hosts by free GPUs) always equal a recomputation from the hosts themselves.
 */
class FleetIndexTest {

    private static final String[] MIGS = {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.6gb",
        "2g.12gb"};

    private static TestFleet.HostBuilder randomHost(Random random, int h) {
        TestFleet.HostBuilder b = host("h" + h);
        String fabric = "f" + random.nextInt(2);
        String spine = "s" + random.nextInt(2);
        String leaf = "l" + random.nextInt(3);
        switch (random.nextInt(6)) {
            case 0 -> b.mig();
            case 1 -> b.model("A30", 24_576).gpus(4).mig();
            case 2 -> b.gpus(4).islands(2);
            case 3 -> {
                return b; // no RDMA fabric
            }
            default -> { }
        }
        return b.leaf(fabric, spine, leaf);
    }

    private static PlacementRequest randomRequest(Random random, int n) {
        String id = "j" + n;
        return switch (random.nextInt(5)) {
            case 0 -> req(id, 1, 1 + random.nextInt(8), null, 0, false);
            case 1 -> req(id, 1, 0, MIGS[random.nextInt(MIGS.length)], 0, false);
            case 2 -> req(id, 1, 0, null, 125 * (1 + random.nextInt(7)), false);
            case 3 -> req(id, 2 + random.nextInt(4), 1 + random.nextInt(8), null, 0, true);
            default -> req(id, 1, 2, null, 0, false);
        };
    }

    private static PlacementRequest req(String id, int workers, int gpus, String mig, int milli, boolean rdma) {
        return new PlacementRequest(id, "t", 0, workers, gpus, mig, milli, 0, 0, Set.of(), 0, rdma, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
    }

    @Test
    void indexesEqualABruteForceRecountAfterRandomReserveReleaseAndInventoryChanges() {
        PlacementFramework framework = new PlacementFramework(Profile.defaults());
        for (int seed = 1; seed <= 5; seed++) {
            Random random = new Random(seed);
            Fleet fleet = new Fleet();
            int hosts = 24;
            for (int h = 0; h < hosts; h++) {
                randomHost(random, h).add(fleet);
            }
            List<String> held = new ArrayList<>();
            for (int step = 0; step < 600; step++) {
                int op = random.nextInt(20);
                if (op < 11) {
                    Decision d = framework.place(fleet, randomRequest(random, step), NOW);
                    d.assignments().forEach(a -> held.add(a.allocationId()));
                } else if (op < 17 && !held.isEmpty()) {
                    fleet.unreserve(held.remove(random.nextInt(held.size())));
                } else if (op == 17) {
                    // the same host reports again (same place in the tree) or moves to another leaf
                    int h = random.nextInt(hosts);
                    fleet.upsert(randomHost(new Random(seed * 1000L + h), h).inventory(), NOW);
                } else if (op == 18) {
                    int h = random.nextInt(hosts);
                    fleet.upsert(randomHost(random, h).inventory(), NOW);
                } else {
                    int h = random.nextInt(hosts);
                    fleet.remove("h" + h);
                    if (random.nextBoolean()) {
                        randomHost(random, h).add(fleet);
                    }
                }
                held.removeIf(id -> fleet.assignment(id).isEmpty());
                if (random.nextInt(7) == 0) {
                    fleet.rdmaLeaves(); // rebuilt lazily: check both with and without a rebuild in between
                }
                assertThat(fleet.indexProblems()).as("seed %d step %d", seed, step).isNull();
            }
        }
    }

    @Test
    void migIndexVisitsOnlyHostsWithAFreeStartFullestFirst() {
        Fleet fleet = new Fleet();
        host("empty").mig().gpus(1).add(fleet);
        host("half").mig().gpus(1).add(fleet);
        host("full").mig().gpus(1).add(fleet);
        host("plain").gpus(1).add(fleet);
        fleet.reserve(new Assignment("a1", "j", "t", 0, "half", List.of(0), "4g.40gb", 0, 0, 0, 0));
        fleet.reserve(new Assignment("a2", "j", "t", 0, "full", List.of(0), "7g.80gb", 0, 0, 0, 0));
        assertThat(fleet.migIndexed("1g.10gb")).extracting(NodeState::id).containsExactly("half", "empty");
        assertThat(fleet.migIndexed("4g.40gb")).extracting(NodeState::id).containsExactly("empty");
        assertThat(fleet.node("half").orElseThrow().migBestPercent("1g.10gb")).isEqualTo(62); // 5 of 8 slices
        assertThat(fleet.node("full").orElseThrow().migBestPercent("1g.10gb")).isEqualTo(-1);
        assertThat(fleet.node("plain").orElseThrow().migBestPercent("1g.10gb")).isEqualTo(-1);
        fleet.unreserve("a2");
        assertThat(fleet.migIndexed("7g.80gb")).extracting(NodeState::id).containsExactlyInAnyOrder("full", "empty");
        assertThat(fleet.indexProblems()).isNull();
    }

    @Test
    void leafCountsBoundTheRoomOfALeaf() {
        Fleet fleet = new Fleet();
        host("a").leaf("f1", "s1", "l1").add(fleet);
        host("b").leaf("f1", "s1", "l1").add(fleet);
        host("c").leaf("f1", "s2", "l2").add(fleet);
        host("solo").add(fleet);
        fleet.reserve(Assignment.whole("x", "j", "t", 0, "a", List.of(0, 1, 2), 0, 0));
        List<RdmaLeaf> leaves = fleet.rdmaLeaves();
        assertThat(leaves).extracting(RdmaLeaf::toString).containsExactly("f1/s1/l1", "f1/s2/l2");
        assertThat(leaves.get(0).roomBound(4)).isEqualTo(3); // 5 free: one worker; 8 free: two
        assertThat(leaves.get(0).roomBound(1)).isEqualTo(13);
        assertThat(leaves.get(1).roomBound(8)).isEqualTo(1);
        fleet.unreserve("x");
        assertThat(fleet.rdmaLeaves().get(0).roomBound(4)).isEqualTo(4);
        assertThat(fleet.indexProblems()).isNull();
    }
}
