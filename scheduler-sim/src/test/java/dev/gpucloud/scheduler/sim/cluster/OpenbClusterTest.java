package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.framework.Decision;
import dev.gpucloud.scheduler.framework.PlacementFramework;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Profile;
import dev.gpucloud.contracts.events.JobSpec;
import static dev.gpucloud.scheduler.sim.cluster.Specs.mkJob;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.sim.trace.TraceFormatException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OpenbClusterTest {

    private final ClusterModel cluster = OpenbCluster.fromNodeList(fixture("openb-nodes-small.csv"));

    @Test
    void each_node_row_becomes_a_host_with_its_cpu_memory_and_gpus() {
        assertThat(cluster.hostCount()).isEqualTo(4);
        assertThat(cluster.gpuCount()).isEqualTo(19);
        assertThat(cluster.gpusByModel()).isEqualTo(Map.of("P100", 2, "G2", 8, "T4", 1, "V100M32", 8));
        assertThat(cluster.cpuMillis()).isEqualTo(288_000);
        assertThat(cluster.memoryMib()).isEqualTo(1_572_864);

        HostInventory a = cluster.hosts().get(0);
        assertThat(a.nodeId()).isEqualTo("node-a");
        assertThat(a.instanceType()).isEqualTo("openb-P100");
        assertThat(a.cpuMillis()).isEqualTo(64_000);
        assertThat(a.memoryMib()).isEqualTo(262_144);
        assertThat(a.rdmaFabric()).isNull();
    }

    @Test
    void gpus_get_the_models_nominal_memory_and_anonymised_models_a_placeholder() {
        HostInventory v100 = cluster.hosts().get(3);
        assertThat(v100.gpus()).extracting(GpuDevice::memoryMib).containsOnly(32_768L);
        HostInventory g2 = cluster.hosts().get(1);
        assertThat(g2.gpus()).extracting(GpuDevice::memoryMib).containsOnly(OpenbCluster.UNKNOWN_MODEL_MEMORY_MIB);
        assertThat(g2.gpus()).extracting(GpuDevice::nvlinkIsland).containsOnly(-1);
    }

    @Test
    void the_production_placer_puts_an_eight_gpu_job_on_an_eight_gpu_host() {
        Decision placement = place(mkJob(1, 8), cluster.toFleet());
        assertThat(placement.assignments()).extracting(Assignment::nodeId).containsExactly("node-b");
    }

    @Test
    void a_malformed_node_list_fails_the_build() {
        assertThatThrownBy(() -> OpenbCluster.fromNodeList(fixture("openb-pods-small.csv")))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("openb-pods-small.csv:1: column 'sn': missing from the header");
        assertThatThrownBy(() -> OpenbCluster.fromNodeList(Path.of("no-such-nodes.csv")))
                .hasMessageStartingWith("no-such-nodes.csv: no such file");
    }
    private static Decision place(JobSpec spec, Fleet fleet) {
        return new PlacementFramework(Profile.builder("test").heartbeatTimeoutMillis(Long.MAX_VALUE / 4).build())
                .place(fleet, PlacementRequest.of("job", "t", 1, spec), ClusterModel.SIM_EPOCH.toEpochMilli());
    }
}
