package dev.gpucloud.scheduler.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.scheduler.framework.TestFleet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An operator's cordon: apart from the host's own drain, kept across the host's comings and goings. */
class CordonTest {

    private static Fleet fleet() {
        return TestFleet.host("h2").gpus(8).add(TestFleet.host("h1").gpus(8).add(new Fleet()));
    }

    private static NodeState node(Fleet fleet, String id) {
        return fleet.node(id).orElseThrow();
    }

    @Test
    void aCordonKeepsNewWorkOffUntilItIsLifted() {
        Fleet fleet = fleet();

        fleet.cordon("h1", "replace NIC");

        assertThat(node(fleet, "h1").draining()).isTrue();
        assertThat(node(fleet, "h1").cordon()).isEqualTo("replace NIC");
        assertThat(node(fleet, "h2").draining()).isFalse();
        assertThat(fleet.uncordon("h1")).isTrue();
        assertThat(node(fleet, "h1").draining()).isFalse();
        assertThat(fleet.uncordon("h1")).as("nothing left to lift").isFalse();
    }

    @Test
    void theHostsOwnUndrainDoesNotLiftAnOperatorsCordon() {
        Fleet fleet = fleet();
        fleet.cordon("h1", "firmware");
        fleet.drain("h1", true);

        fleet.drain("h1", false);

        assertThat(node(fleet, "h1").draining()).isTrue();
        fleet.uncordon("h1");
        assertThat(node(fleet, "h1").draining()).isFalse();
    }

    @Test
    void aCordonOutlivesTheHostLeavingAndMayNameAHostNotYetKnown() {
        Fleet fleet = fleet();
        fleet.cordon("h1", "rma");
        fleet.cordon("h3", "not racked yet");

        fleet.remove("h1");
        TestFleet.host("h1").gpus(8).add(fleet);
        TestFleet.host("h3").gpus(8).add(fleet);

        assertThat(node(fleet, "h1").cordon()).isEqualTo("rma");
        assertThat(node(fleet, "h3").cordon()).isEqualTo("not racked yet");
    }

    @Test
    void replacingTheCordonsLiftsThoseNoLongerThereAndAddsTheNewOnes() {
        Fleet fleet = fleet();
        fleet.cordon("h1", "old");

        fleet.replaceCordons(Map.of("h2", "new"));

        assertThat(node(fleet, "h1").draining()).isFalse();
        assertThat(node(fleet, "h2").cordon()).isEqualTo("new");
        assertThat(fleet.cordons()).containsOnlyKeys("h2");
    }

    @Test
    void theJobsOnAHostAreEachNamedOnce() {
        Fleet fleet = fleet();
        fleet.reserve(Assignment.whole("a-r0", "job-b", "t", 0, "h1", List.of(0), 0, 0));
        fleet.reserve(Assignment.whole("b-r0", "job-a", "t", 0, "h1", List.of(1), 0, 0));
        fleet.reserve(Assignment.whole("b-r1", "job-a", "t", 1, "h1", List.of(2), 0, 0));

        assertThat(fleet.jobsOn("h1")).containsExactly("job-a", "job-b");
        assertThat(fleet.jobsOn("h2")).isEmpty();
    }
}
