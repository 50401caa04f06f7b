package dev.gpucloud.scheduler.sim.cluster;

import static dev.gpucloud.scheduler.Fixtures.mkJob;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
import dev.gpucloud.scheduler.placement.FirstFitPlacer;
import dev.gpucloud.scheduler.placement.Placement;
import dev.gpucloud.scheduler.placement.WorkerSlot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MuriClusterTest {

    private final ClusterModel muri = MuriCluster.build();

    @Test
    void it_has_eight_hosts_of_eight_gpus_under_one_switch() {
        assertThat(muri.hostCount()).isEqualTo(8);
        assertThat(muri.gpuCount()).isEqualTo(64);
        assertThat(muri.gpusByModel()).isEqualTo(Map.of(MuriCluster.GPU_MODEL, 64));
        assertThat(muri.hosts()).extracting(HostInventory::nodeId)
                .containsExactly("muri-0", "muri-1", "muri-2", "muri-3", "muri-4", "muri-5", "muri-6", "muri-7");
        assertThat(muri.hosts()).allSatisfy(h -> {
            assertThat(h.gpus()).hasSize(8);
            assertThat(h.rdmaFabric()).isEqualTo(MuriCluster.FABRIC);
            assertThat(h.switchPath()).containsExactly(MuriCluster.FABRIC);
        });
    }

    @Test
    void the_production_placer_spreads_a_16_gpu_job_over_two_whole_hosts() {
        Placement placement = new FirstFitPlacer().place(
                mkJob(2, 8, List.of(), Interconnect.RDMA, CapacityPreference.ON_DEMAND), muri.toClusterState());

        assertThat(placement.isPlaced()).isTrue();
        assertThat(placement.slots()).extracting(WorkerSlot::nodeId).containsExactly("muri-0", "muri-1");
        assertThat(placement.slots()).allSatisfy(s -> assertThat(s.gpuIndices()).hasSize(8));
    }

    @Test
    void a_job_larger_than_the_cluster_does_not_fit_and_says_why() {
        Placement placement = new FirstFitPlacer().place(mkJob(9, 8), muri.toClusterState());

        assertThat(placement.isPlaced()).isFalse();
        assertThat(placement.reasons()).contains("worker 8 of 9 has no place (a gang starts all workers or none)");
    }

    @Test
    void each_build_is_a_fresh_cluster_with_nothing_allocated() {
        assertThat(MuriCluster.build()).isEqualTo(muri);
        assertThat(muri.toClusterState().freeGpus("muri-3")).hasSize(8);
    }
}
