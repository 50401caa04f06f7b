package dev.gpucloud.scheduler.framework;

import static dev.gpucloud.scheduler.framework.TestFleet.NOW;
import static dev.gpucloud.scheduler.framework.TestFleet.host;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.PriorityClass;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.plugins.FragmentationGradientScore;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class FragmentationGradientScoreTest {

    private static PlacementRequest whole(int gpus) {
        return PlacementRequest.whole("j" + gpus, 1, gpus);
    }

    private static void hold(Fleet fleet, String node, int gpus) {
        fleet.reserve(Assignment.whole("held-" + node, "other", "t", 0, node,
                IntStream.range(0, gpus).boxed().toList(), 0, 0));
    }

    @Test
    void keepsRoomForTheShapesTheClusterRuns() {
        Fleet fleet = new Fleet();
        host("five-free").add(fleet);
        host("four-free").add(fleet);
        hold(fleet, "five-free", 3);
        hold(fleet, "four-free", 4);
        FragmentationGradientScore fgd = new FragmentationGradientScore(100);
        for (int i = 0; i < 20; i++) {
            fgd.observe(whole(4)); // the workload is 4-GPU jobs
        }
        CycleState state = new CycleState(fleet, NOW, Profile.defaults());
        int onFive = fgd.score(state, whole(1), fleet.node("five-free").orElseThrow());
        int onFour = fgd.score(state, whole(1), fleet.node("four-free").orElseThrow());
        // one GPU off the 5-free host still leaves room for a 4-GPU job; off the 4-free host it leaves 3 stranded
        assertThat(onFive).isEqualTo(50);
        assertThat(onFour).isLessThan(onFive);
    }

    @Test
    void isNeutralUntilAShapeWasSeenAndForMigSlices() {
        Fleet fleet = new Fleet();
        host("h").add(fleet);
        FragmentationGradientScore fgd = new FragmentationGradientScore(10);
        CycleState state = new CycleState(fleet, NOW, Profile.defaults());
        assertThat(fgd.score(state, whole(1), fleet.node("h").orElseThrow())).isEqualTo(50);
        assertThat(fgd.distribution()).isEmpty();
        PlacementRequest mig = new PlacementRequest("m", "t", 0, 1, 0, "1g.10gb", 0, 0, 0, Set.of(), 0, false, false,
                CapacityPreference.ON_DEMAND, 0, null, Set.of(), PriorityClass.NORMAL);
        fgd.observe(mig);
        assertThat(fgd.distribution()).isEmpty();
        fgd.observe(whole(2));
        assertThat(fgd.distribution()).isPresent();
        assertThat(fgd.score(state, mig, fleet.node("h").orElseThrow())).isEqualTo(50);
    }
}
