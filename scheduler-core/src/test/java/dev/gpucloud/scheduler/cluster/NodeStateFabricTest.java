package dev.gpucloud.scheduler.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.scheduler.Fixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A host is a member of its RDMA fabric only while its reported ports (if it reports any) have one up. */
class NodeStateFabricTest {

    private static final RdmaNic UP = new RdmaNic("mlx5_0", 1, "ACTIVE", "InfiniBand", 200);
    private static final RdmaNic DOWN = new RdmaNic("mlx5_1", 1, "DOWN", "InfiniBand", 200);

    private static String fabricOf(List<RdmaNic> nics) {
        Fleet fleet = new Fleet();
        fleet.upsert(Fixtures.mkHost("h1", "A100", 8, CapacityType.ON_DEMAND, "f1").withRdmaNics(nics), 0);
        return fleet.node("h1").orElseThrow().fabric();
    }

    @Test
    void aHostWithoutReportedPortsKeepsItsConfiguredFabric() {
        assertThat(fabricOf(List.of())).isEqualTo("f1");
    }

    @Test
    void oneActivePortIsEnough() {
        assertThat(fabricOf(List.of(DOWN, UP))).isEqualTo("f1");
    }

    @Test
    void aHostWhosePortsAreAllDownIsInNoFabric() {
        assertThat(fabricOf(List.of(DOWN))).isNull();
    }
}
