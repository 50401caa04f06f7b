package dev.gpucloud.scheduler.placement;

import static dev.gpucloud.scheduler.Fixtures.T0;
import static dev.gpucloud.scheduler.Fixtures.mkHost;
import static dev.gpucloud.scheduler.Fixtures.mkJob;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.scheduler.cluster.Allocation;
import dev.gpucloud.scheduler.cluster.ClusterState;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FirstFitPlacerTest {

    private final FirstFitPlacer placer = new FirstFitPlacer();

    static ClusterState cluster(HostInventory... hosts) {
        ClusterState cluster = new ClusterState();
        for (HostInventory h : hosts) {
            cluster.upsertHost(h, T0);
        }
        return cluster;
    }

    static Stream<Arguments> cases() {
        HostInventory a100 = mkHost("a", "A100", 8, CapacityType.ON_DEMAND, "fab-1");
        HostInventory b100 = mkHost("b", "A100", 8, CapacityType.ON_DEMAND, "fab-2");
        HostInventory c100 = mkHost("c", "A100", 8, CapacityType.ON_DEMAND, "fab-2");
        HostInventory spot = mkHost("s", "V100", 1, CapacityType.SPOT, null);
        HostInventory small = mkHost("t", "A10G", 1);
        return Stream.of(
                Arguments.of("one GPU lands on the first host", mkJob(1, 1), List.of(a100, small),
                        List.of("a:[0]")),
                Arguments.of("allowed model skips other hosts",
                        mkJob(1, 1, List.of("A10G"), Interconnect.NONE, CapacityPreference.ON_DEMAND),
                        List.of(a100, small), List.of("t:[0]")),
                Arguments.of("gang of two fills one host before the next", mkJob(2, 4), List.of(a100, b100),
                        List.of("a:[0, 1, 2, 3]", "a:[4, 5, 6, 7]")),
                Arguments.of("NVLink worker stays on one island", mkJob(1, 4, List.of(), Interconnect.NVLINK,
                        CapacityPreference.ON_DEMAND), List.of(a100), List.of("a:[0, 1, 2, 3]")),
                Arguments.of("RDMA gang stays in the first worker's fabric", mkJob(3, 8, List.of(),
                        Interconnect.RDMA, CapacityPreference.ON_DEMAND), List.of(a100, b100, c100),
                        List.of()),
                Arguments.of("RDMA gang of two in one fabric", mkJob(2, 8, List.of(), Interconnect.RDMA,
                        CapacityPreference.ON_DEMAND), List.of(b100, c100), List.of("b:[0, 1, 2, 3, 4, 5, 6, 7]",
                        "c:[0, 1, 2, 3, 4, 5, 6, 7]")),
                Arguments.of("on-demand job never lands on spot", mkJob(1, 1), List.of(spot), List.of()),
                Arguments.of("spot job lands only on spot", mkJob(1, 1, List.of(), Interconnect.NONE,
                        CapacityPreference.SPOT), List.of(a100, spot), List.of("s:[0]")),
                Arguments.of("spot-preferred tries spot first", mkJob(1, 1, List.of(), Interconnect.NONE,
                        CapacityPreference.SPOT_PREFERRED), List.of(a100, spot), List.of("s:[0]")),
                Arguments.of("too big for any host", mkJob(1, 16), List.of(a100), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void places_first_fit(String name, JobSpec job, List<HostInventory> hosts, List<String> expected) {
        Placement placement = placer.place(job, cluster(hosts.toArray(HostInventory[]::new)));

        assertThat(placement.slots().stream().map(s -> s.nodeId() + ":" + s.gpuIndices()).toList())
                .isEqualTo(expected);
        assertThat(placement.isPlaced()).isEqualTo(!expected.isEmpty());
    }

    @Test
    void held_gpus_are_not_offered_again() {
        ClusterState cluster = cluster(mkHost("a", "A100", 2));
        cluster.reserve(new Allocation("x", "job-x", 0, "a", List.of(0)));

        Placement placement = placer.place(mkJob(1, 1), cluster);

        assertThat(placement.slots().get(0).gpuIndices()).containsExactly(1);
    }

    @Test
    void pending_reasons_are_counted_per_host() {
        ClusterState cluster = cluster(mkHost("a", "A100", 8), mkHost("b", "A100", 8),
                mkHost("s", "V100", 1, CapacityType.SPOT, null));
        cluster.setDraining("b", true);

        Placement placement = placer.place(mkJob(1, 16), cluster);

        assertThat(placement.isPlaced()).isFalse();
        assertThat(placement.reasons()).containsExactly(
                "1 host: draining",
                "1 host: insufficient free GPUs (need 16)",
                "1 host: spot capacity, job wants on-demand");
    }

    @Test
    void gang_that_does_not_fit_names_the_worker_and_places_nobody() {
        Placement placement = placer.place(mkJob(3, 8), cluster(mkHost("a", "A100", 8), mkHost("b", "A100", 8)));

        assertThat(placement.slots()).isEmpty();
        assertThat(placement.reasons().get(0)).contains("worker 2 of 3");
    }

    @Test
    void host_not_heard_from_lately_takes_nothing() {
        ClusterState cluster = cluster(mkHost("a", "A100", 8), mkHost("b", "A100", 8));
        cluster.heardFrom("b", T0.plusSeconds(100));

        Placement placement = placer.place(mkJob(1, 1), cluster, T0.plusSeconds(50));

        assertThat(placement.slots().get(0).nodeId()).isEqualTo("b");
        assertThat(placer.place(mkJob(2, 8), cluster, T0.plusSeconds(50)).reasons())
                .contains("1 host: no telemetry lately (host may be gone)");
    }

    @Test
    void empty_cluster_says_so() {
        assertThat(placer.place(mkJob(1, 1), new ClusterState()).summary())
                .isEqualTo("no hosts have reported inventory");
    }
}
