package dev.gpucloud.scheduler.cluster;

import static dev.gpucloud.scheduler.Fixtures.T0;
import static dev.gpucloud.scheduler.Fixtures.mkHost;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterStateTest {

    @Test
    void reserving_twice_is_a_no_op_and_release_is_idempotent() {
        ClusterState cluster = new ClusterState();
        cluster.upsertHost(mkHost("a", "A100", 2), T0);
        Allocation x = new Allocation("x", "job", 0, "a", List.of(0));

        cluster.reserve(x);
        cluster.reserve(x);
        assertThat(cluster.freeGpus("a")).hasSize(1);

        assertThat(cluster.release("x")).isPresent();
        assertThat(cluster.release("x")).isEmpty();
        assertThat(cluster.freeGpus("a")).hasSize(2);
    }

    @Test
    void a_gpu_cannot_be_held_twice() {
        ClusterState cluster = new ClusterState();
        cluster.upsertHost(mkHost("a", "A100", 2), T0);
        cluster.reserve(new Allocation("x", "job", 0, "a", List.of(0)));

        assertThatThrownBy(() -> cluster.reserve(new Allocation("y", "job2", 0, "a", List.of(0))))
                .hasMessageContaining("GPU 0 of a is already held");
    }

    @Test
    void allocation_restored_before_its_host_returns_holds_the_gpus_when_it_does() {
        ClusterState cluster = new ClusterState();
        cluster.reserve(new Allocation("x", "job", 0, "a", List.of(1)));

        cluster.upsertHost(mkHost("a", "A100", 2), T0);

        assertThat(cluster.freeGpus("a")).extracting(g -> g.index()).containsExactly(0);
    }

    @Test
    void removing_a_host_returns_its_allocations() {
        ClusterState cluster = new ClusterState();
        cluster.upsertHost(mkHost("a", "A100", 2), T0);
        cluster.reserve(new Allocation("x", "job", 0, "a", List.of(1)));

        assertThat(cluster.removeHost("a")).extracting(Allocation::allocationId).containsExactly("x");
        assertThat(cluster.host("a")).isEmpty();
    }

    @Test
    void drain_survives_a_fresh_inventory() {
        ClusterState cluster = new ClusterState();
        cluster.upsertHost(mkHost("a", "A100", 2), T0);
        cluster.setDraining("a", true);

        cluster.upsertHost(mkHost("a", "A100", 2), T0.plusSeconds(60));

        assertThat(cluster.host("a").orElseThrow().draining()).isTrue();
    }
}
