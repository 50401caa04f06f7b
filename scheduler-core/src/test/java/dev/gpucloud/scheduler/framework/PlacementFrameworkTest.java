package dev.gpucloud.scheduler.framework;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PlacementFrameworkTest {

    private final PlacementFramework framework = new PlacementFramework(Profile.defaults());

    private static void hold(Fleet fleet, String node, int gpus) {
        fleet.reserve(Assignment.whole("held-" + node, "other", "t", 0, node,
                IntStream.range(0, gpus).boxed().toList(), 0, 0));
    }

    private int jobs;

    private PlacementRequest request(int workers, int gpus, boolean rdma, String mig, int milli,
            CapacityPreference capacity, String dataset) {
        return new PlacementRequest("job" + (++jobs), "t", 0, workers, gpus, mig, milli, 0, 0, Set.of(), 0, rdma, false, capacity,
                0, dataset, Set.of(), PriorityClass.NORMAL);
    }

    @Test
    void eightGpusGoToOneWholeHostNotTwoHalves() {
        Fleet fleet = new Fleet();
        host("half-a").add(fleet);
        host("half-b").add(fleet);
        host("whole").add(fleet);
        hold(fleet, "half-a", 4);
        hold(fleet, "half-b", 4);
        Decision d = framework.place(fleet, PlacementRequest.whole("job", 1, 8), NOW);
        assertThat(d.isPlaced()).isTrue();
        assertThat(d.assignments()).singleElement().satisfies(a -> {
            assertThat(a.nodeId()).isEqualTo("whole");
            assertThat(a.gpuIndices()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        });
    }

    @Test
    void smallJobsPackOntoTheFullestHostAndKeepWholeHostsFree() {
        Fleet fleet = new Fleet();
        host("empty").add(fleet);
        host("busy").add(fleet);
        host("half").add(fleet);
        hold(fleet, "busy", 6);
        hold(fleet, "half", 4);
        Decision d = framework.place(fleet, PlacementRequest.whole("job", 1, 2), NOW);
        assertThat(d.assignments()).singleElement().extracting(Assignment::nodeId).isEqualTo("busy");
        assertThat(fleet.node("empty").orElseThrow().wholeFree()).isEqualTo(8);
    }

    @Test
    void aGangThatDoesNotFitReservesNothingAndSaysWhy() {
        Fleet fleet = new Fleet();
        host("a").add(fleet);
        host("b").add(fleet);
        host("c").add(fleet);
        hold(fleet, "b", 2);
        hold(fleet, "c", 2);
        Decision d = framework.place(fleet, request(3, 8, false, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(d.isPlaced()).isFalse();
        assertThat(d.reasons()).containsExactly(
                "worker 1 of 3 has no place (a gang starts all workers or none)",
                "2 hosts: 6 of 8 A100-SXM4-80GB free, need 8",
                "1 host: fits one worker but not the whole job");
        assertThat(fleet.assignments()).extracting(Assignment::allocationId).containsExactly("held-b", "held-c");
        assertThat(fleet.node("a").orElseThrow().wholeFree()).isEqualTo(8);
    }

    @Test
    void anRdmaGangStaysInOneFabricOnTheFewestLeaves() {
        Fleet fleet = new Fleet();
        // fabric f1: leaf l1 has 2 hosts, leaf l2 has 4 hosts; fabric f2: 1 host per leaf
        for (int i = 0; i < 2; i++) {
            host("f1-l1-" + i).leaf("f1", "s1", "l1").add(fleet);
        }
        for (int i = 0; i < 4; i++) {
            host("f1-l2-" + i).leaf("f1", "s1", "l2").add(fleet);
        }
        for (int i = 0; i < 4; i++) {
            host("f2-l" + i).leaf("f2", "s" + (i / 2), "l" + i).add(fleet);
        }
        Decision d = framework.place(fleet, request(4, 8, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(d.assignments()).extracting(Assignment::nodeId)
                .containsExactly("f1-l2-0", "f1-l2-1", "f1-l2-2", "f1-l2-3");
        assertThat(d.assignments()).extracting(Assignment::rank).containsExactly(0, 1, 2, 3);

        // 6 more workers: f1 has room for only 2, f2 for 4: a gang never spans fabrics
        Decision big = framework.place(fleet, request(6, 8, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(big.isPlaced()).isFalse();
        assertThat(big.reasons()).contains("fabric f1: room for 2 of 6 workers", "fabric f2: room for 4 of 6 workers");

        // 3 workers now: the tightest single leaf in f1 is l1 (2 hosts) - too small; f2 needs 3 leaves;
        // f1 has l1 only (2): so f2 across two spines is the only way
        Decision three = framework.place(fleet, request(3, 8, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(three.assignments()).extracting(Assignment::nodeId).allMatch(n -> n.startsWith("f2-"));
    }

    @Test
    void anRdmaGangPrefersOneLeafThenOneSpine() {
        Fleet fleet = new Fleet();
        host("s1-l1-a").leaf("f", "s1", "l1").add(fleet);
        host("s1-l2-a").leaf("f", "s1", "l2").add(fleet);
        host("s2-l3-a").leaf("f", "s2", "l3").add(fleet);
        host("s2-l3-b").leaf("f", "s2", "l3").add(fleet);
        host("s2-l3-c").leaf("f", "s2", "l3").add(fleet);
        Decision two = framework.explain(fleet, request(2, 8, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(two.assignments()).extracting(Assignment::nodeId).allMatch(n -> n.startsWith("s2-l3"));
        hold(fleet, "s2-l3-a", 8);
        hold(fleet, "s2-l3-b", 8);
        // l3 has one host left; s1 offers two leaves under one spine
        Decision again = framework.place(fleet, request(2, 8, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(again.assignments()).extracting(Assignment::nodeId).containsExactlyInAnyOrder("s1-l1-a", "s1-l2-a");
    }

    @Test
    void twoWorkersShareAHostWhenItHasRoom() {
        Fleet fleet = new Fleet();
        host("a").leaf("f", "s", "l").add(fleet);
        Decision d = framework.place(fleet, request(2, 4, true, null, 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(d.assignments()).extracting(Assignment::nodeId).containsExactly("a", "a");
        assertThat(d.assignments().get(0).gpuIndices()).doesNotContainAnyElementsOf(d.assignments().get(1).gpuIndices());
    }

    @Test
    void fractionsFillASharedGpuBeforeBreakingAWholeOne() {
        Fleet fleet = new Fleet();
        host("a").gpus(2).add(fleet);
        Decision first = framework.place(fleet, request(1, 0, false, null, 500, CapacityPreference.ON_DEMAND, null), NOW);
        Decision second = framework.place(fleet, request(1, 0, false, null, 250, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(first.assignments().get(0).gpuIndices()).isEqualTo(second.assignments().get(0).gpuIndices());
        assertThat(fleet.node("a").orElseThrow().wholeFree()).isEqualTo(1);
        Decision third = framework.place(fleet, request(1, 0, false, null, 500, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(third.assignments().get(0).gpuIndices()).isNotEqualTo(first.assignments().get(0).gpuIndices());
    }

    @Test
    void migSlicesFollowThePlacementRules() {
        Fleet fleet = new Fleet();
        host("m").gpus(1).mig().add(fleet);
        Decision four = framework.place(fleet, request(1, 0, false, "4g.40gb", 0, CapacityPreference.ON_DEMAND, null), NOW);
        Decision three = framework.place(fleet, request(1, 0, false, "3g.40gb", 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(four.assignments().get(0).migStart()).isZero();
        assertThat(three.assignments().get(0).migStart()).isEqualTo(4);
        Decision none = framework.place(fleet, request(1, 0, false, "1g.10gb", 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(none.reasons()).containsExactly("1 host: no free 1g.10gb slot");
        fleet.unreserve(three.assignments().get(0).allocationId());
        Decision small = framework.place(fleet, request(1, 0, false, "1g.10gb", 0, CapacityPreference.ON_DEMAND, null), NOW);
        assertThat(small.assignments().get(0).migStart()).isEqualTo(6);
    }

    @Test
    void spotPreferredJobsGoToSpotAndFallBackToOnDemand() {
        Fleet fleet = new Fleet();
        host("od").add(fleet);
        host("spot").spot(12_000_000).add(fleet);
        Decision d = framework.place(fleet, request(1, 8, false, null, 0, CapacityPreference.SPOT_PREFERRED, null), NOW);
        assertThat(d.assignments().get(0).nodeId()).isEqualTo("spot");
        Decision e = framework.place(fleet, request(1, 8, false, null, 0, CapacityPreference.SPOT_PREFERRED, null), NOW);
        assertThat(e.assignments().get(0).nodeId()).isEqualTo("od");
    }

    @Test
    void prefersTheHostThatCachesTheDataset() {
        Fleet fleet = new Fleet();
        host("a").add(fleet);
        host("b").datasets("imagenet").add(fleet);
        Decision d = framework.place(fleet, request(1, 8, false, null, 0, CapacityPreference.ON_DEMAND, "imagenet"), NOW);
        assertThat(d.assignments().get(0).nodeId()).isEqualTo("b");
    }

    @Test
    void explainLeavesTheFleetAsItWas() {
        Fleet fleet = new Fleet();
        host("a").add(fleet);
        long version = fleet.version();
        Decision d = framework.explain(fleet, PlacementRequest.whole("job", 1, 4), NOW);
        assertThat(d.isPlaced()).isTrue();
        assertThat(fleet.assignments()).isEmpty();
        assertThat(fleet.node("a").orElseThrow().wholeFree()).isEqualTo(8);
        assertThat(fleet.version()).isGreaterThan(version);
    }

    @Test
    void unreserveIsIdempotent() {
        Fleet fleet = new Fleet();
        host("a").add(fleet);
        Decision d = framework.place(fleet, PlacementRequest.whole("job", 1, 4), NOW);
        String id = d.assignments().get(0).allocationId();
        assertThat(fleet.unreserve(id)).isPresent();
        assertThat(fleet.unreserve(id)).isEmpty();
        assertThat(fleet.unreserve("never")).isEmpty();
        assertThat(fleet.node("a").orElseThrow().wholeFree()).isEqualTo(8);
    }

    @Test
    void admissionRejectsWhatNoHostCouldEverTake() {
        Fleet fleet = new Fleet();
        for (int i = 0; i < 4; i++) {
            host("h" + i).leaf("f1", "s", "l").add(fleet);
        }
        host("x").leaf("f2", "s", "l").add(fleet);
        assertThat(framework.everFits(fleet, request(4, 8, true, null, 0, CapacityPreference.ON_DEMAND, null)).isSuccess())
                .isTrue();
        Status tooBig = framework.everFits(fleet, request(5, 8, true, null, 0, CapacityPreference.ON_DEMAND, null));
        assertThat(tooBig.code()).isEqualTo(Status.Code.UNRESOLVABLE);
        assertThat(tooBig.reason()).isEqualTo("gang of 5 workers is larger than any RDMA fabric (the largest holds 4)");
        assertThat(framework.everFits(fleet, request(1, 16, false, null, 0, CapacityPreference.ON_DEMAND, null)).reason())
                .isEqualTo("no host of the fleet can take even one worker of this shape");
        assertThat(framework.everFits(fleet, request(1, 0, false, "1g.10gb", 0, CapacityPreference.ON_DEMAND, null))
                .code()).isEqualTo(Status.Code.UNRESOLVABLE);
        assertThat(framework.everFits(new Fleet(), request(9, 8, true, null, 0, CapacityPreference.ON_DEMAND, null))
                .isSuccess()).isTrue();
        PlacementRequest otherModel = new PlacementRequest("h100", "t", 0, 9, 8, null, 0, 0, 0, Set.of("H100-SXM5-80GB"),
                0, true, false, CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
        assertThat(framework.everFits(fleet, otherModel).isSuccess()).isTrue();
    }

    @Test
    void aHostThatComesBackKeepsWhatItHeld() {
        Fleet fleet = new Fleet();
        fleet.reserve(Assignment.whole("early", "job", "t", 0, "late", List.of(0, 1), 0, 0));
        host("late").add(fleet);
        assertThat(fleet.node("late").orElseThrow().wholeFree()).isEqualTo(6);
        host("late").gpus(1).add(fleet);
        assertThat(fleet.assignment("early")).isEmpty();
        assertThat(fleet.remove("late")).isEmpty();
    }

    @Test
    void removingAHostReturnsItsAssignments() {
        Fleet fleet = new Fleet();
        host("a").add(fleet);
        host("b").add(fleet);
        Decision d = framework.place(fleet, PlacementRequest.whole("job", 1, 8), NOW);
        String node = d.assignments().get(0).nodeId();
        assertThat(fleet.remove(node)).containsExactlyElementsOf(d.assignments());
        assertThat(fleet.assignments()).isEmpty();
        assertThat(fleet.size()).isEqualTo(1);
        assertThat(framework.place(fleet, PlacementRequest.whole("job2", 1, 8), NOW).isPlaced()).isTrue();
    }
}
