package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.contracts.events.JobSpec;
import static dev.gpucloud.scheduler.sim.cluster.Specs.mkJob;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityPreference;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.Interconnect;
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
        Decision placement = place(mkJob(2, 8, List.of(), Interconnect.RDMA, CapacityPreference.ON_DEMAND),
                muri.toFleet());

        assertThat(placement.isPlaced()).isTrue();
        assertThat(placement.assignments()).extracting(Assignment::nodeId).containsExactly("muri-0", "muri-1");
        assertThat(placement.assignments()).allSatisfy(s -> assertThat(s.gpuIndices()).hasSize(8));
    }

    @Test
    void a_job_larger_than_the_cluster_does_not_fit_and_says_why() {
        Decision placement = place(mkJob(9, 8), muri.toFleet());

        assertThat(placement.isPlaced()).isFalse();
        assertThat(placement.reasons()).contains("worker 8 of 9 has no place (a gang starts all workers or none)");
    }

    @Test
    void each_build_is_a_fresh_cluster_with_nothing_allocated() {
        assertThat(MuriCluster.build()).isEqualTo(muri);
        assertThat(muri.toFleet().node("muri-3").orElseThrow().wholeFree()).isEqualTo(8);
    }
    private static Decision place(JobSpec spec, Fleet fleet) {
        return new PlacementFramework(Profile.builder("test").heartbeatTimeoutMillis(Long.MAX_VALUE / 4).build())
                .place(fleet, PlacementRequest.of("job", "t", 1, spec), ClusterModel.SIM_EPOCH.toEpochMilli());
    }
}
