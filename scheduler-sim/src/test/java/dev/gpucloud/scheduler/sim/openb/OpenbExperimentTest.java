package dev.gpucloud.scheduler.sim.openb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.scheduler.sim.trace.OpenbNode;
import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenbExperimentTest {

    private static OpenbPod pod(String name, int numGpu, int milli) {
        return new OpenbPod(name, 1_000, 1_024, numGpu, milli);
    }

    @Test
    void a_longer_list_loses_random_pods_until_it_fits_the_target() {
        List<OpenbPod> pods = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            pods.add(pod("p" + i, 1, 100 + i * 10));
        }
        List<OpenbPod> a = OpenbExperiment.arrivals(pods, 42, 10_000);
        assertThat(a.stream().mapToLong(OpenbPod::totalGpuMilli).sum()).isLessThanOrEqualTo(10_000);
        assertThat(a).doesNotHaveDuplicates().isSubsetOf(pods);
        assertThat(OpenbExperiment.arrivals(pods, 42, 10_000)).isEqualTo(a);
        assertThat(OpenbExperiment.arrivals(pods, 43, 10_000)).isNotEqualTo(a);
    }

    @Test
    void a_shorter_list_is_topped_up_with_pods_drawn_again_until_the_next_would_pass() {
        List<OpenbPod> pods = List.of(pod("a", 1, 500), pod("b", 1, 1000), pod("c", 0, 0));
        List<OpenbPod> a = OpenbExperiment.arrivals(pods, 1, 10_000);
        long total = a.stream().mapToLong(OpenbPod::totalGpuMilli).sum();
        assertThat(total).isLessThanOrEqualTo(10_000).isGreaterThan(10_000 - 1000);
        assertThat(a).containsAll(pods);
        // only CPU pods: nothing to top up with
        assertThat(OpenbExperiment.arrivals(List.of(pod("c", 0, 0)), 1, 10_000)).hasSize(1);
    }

    @Test
    void a_pod_that_does_not_fit_is_dropped_and_still_counts_as_arrived() {
        // one node of 2 GPUs; shares of 600, 600 and a whole GPU (110% of the cluster): whatever the order,
        // exactly one of them cannot be placed (two 600s need both GPUs; the whole one needs a free GPU)
        List<OpenbNode> nodes = List.of(new OpenbNode("n", 64_000, 262_144, 2, "T4"));
        List<OpenbPod> pods = List.of(pod("s1", 1, 600), pod("s2", 1, 600), pod("w", 1, 1000));
        for (String policy : OpenbExperiment.POLICIES) {
            for (long seed = 42; seed < 46; seed++) {
                OpenbExperiment.Result r = OpenbExperiment.run(nodes, pods, policy, seed, 1.1);
                assertThat(r.attempted()).isEqualTo(3);
                assertThat(r.failed()).isEqualTo(1);
                // the last attempt: arrived 110%, allocated 60% (1200 of 2000) or 80% (1600)
                assertThat(r.allocatedPercentAt(110)).isIn(60.0, 80.0);
            }
        }
    }

    @Test
    void fgd_beats_bestfit_where_bestfit_strands_a_share() {
        // 2 nodes of 1 GPU; pods in the order they come: 300, 700, 700 (seed-independent: every order of
        // two 700s and a 300 fits perfectly on one GPU each only if the 300 joins a 700)
        List<OpenbNode> nodes = List.of(new OpenbNode("a", 64_000, 262_144, 1, "T4"),
                new OpenbNode("b", 64_000, 262_144, 1, "T4"));
        List<OpenbPod> pods = List.of(pod("x", 1, 300), pod("y", 1, 700), pod("z", 1, 700));
        for (long seed = 42; seed < 52; seed++) {
            assertThat(OpenbExperiment.run(nodes, pods, "fgd", seed, 0.85).allocatedPercentAt(85)).isEqualTo(85.0);
        }
    }

    @Test
    void an_unknown_policy_is_refused_by_name() {
        assertThatThrownBy(() -> OpenbExperiment.policy("worstfit", List.of(pod("a", 1, 10)), 1))
                .hasMessageContaining("unknown packing policy 'worstfit'");
    }
}
