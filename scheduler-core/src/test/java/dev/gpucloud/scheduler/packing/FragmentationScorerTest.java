package dev.gpucloud.scheduler.packing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Table tests on small nodes whose answers were worked out by hand (see the comments). */
class FragmentationScorerTest {

    private static NodeView node(long cpuFree, int... free) {
        return new NodeView("n", free, cpuFree, 1_000_000, "T4", 8_000);
    }

    private static final TaskShape SHARE_500 = TaskShape.of(1, 500, 1_000, 1_000);
    private static final TaskShape ONE_GPU = TaskShape.of(1, 1000, 1_000, 1_000);
    private static final TaskShape TWO_GPUS = TaskShape.of(2, 1000, 1_000, 1_000);
    private static final TaskShape CPU_ONLY = TaskShape.of(0, 0, 1_000, 1_000);

    @ParameterizedTest(name = "free {0}, task {1} x {2} milli -> {3}")
    @CsvSource({
            // free milli per GPU | numGpu | gpuMilli | fragmentation: free milli the task cannot use
            "1000 300 0, 1, 500, 300",    // 300 < 500 is a fragment; 1000 is usable; 0 adds nothing
            "1000 300 0, 1, 200, 0",      // 300 >= 200: usable
            "1000 300 0, 1, 1000, 300",   // a whole GPU: the partial 300 is a fragment
            "1000 300 0, 2, 1000, 1300",  // two whole GPUs do not fit: all free milli is fragmented
            "1000 1000 300, 2, 1000, 300",
            "1000 300 0, 0, 0, 0",        // a CPU-only task that fits sees no fragment
            "300 300, 1, 500, 600",       // no GPU has 500: the task does not fit, all free is fragmented
    })
    void fragmentation_for_one_task(String free, int numGpu, int milli, double expected) {
        int[] gpus = java.util.Arrays.stream(free.split(" ")).mapToInt(Integer::parseInt).toArray();
        assertThat(FragmentationScorer.fragmentation(node(8_000, gpus), TaskShape.of(numGpu, milli, 1_000, 1_000)))
                .isEqualTo(expected);
    }

    @Test
    void a_task_whose_cpu_does_not_fit_sees_every_free_gpu_as_fragment() {
        assertThat(FragmentationScorer.fragmentation(node(500, 1000, 300), SHARE_500)).isEqualTo(1300);
        assertThat(FragmentationScorer.fragmentation(node(500, 1000, 300), CPU_ONLY)).isEqualTo(1300);
    }

    @Test
    void fragmentation_over_a_distribution_is_the_weighted_mean() {
        Distribution d = new Distribution(List.of(new Distribution.Entry(SHARE_500, 0.5),
                new Distribution.Entry(TWO_GPUS, 0.5)));
        // 0.5 x 300 + 0.5 x 1300
        assertThat(FragmentationScorer.fragmentation(node(8_000, 1000, 300, 0), d)).isEqualTo(800);
    }

    @Test
    void the_score_is_the_least_increase_over_the_gpus_of_the_node() {
        Distribution d = Distribution.single(SHARE_500);
        NodeView n = node(8_000, 1000, 300, 0);
        TaskShape share200 = TaskShape.of(1, 200, 1_000, 1_000);
        // before: 300. On GPU 0: [800, 300, 0] -> 300, delta 0. On GPU 1: [1000, 100, 0] -> 100, delta -200.
        assertThat(FragmentationScorer.score(n, share200, d)).hasValue(-200);
        assertThat(FragmentationScorer.bestGpus(n, share200, d)).contains(GpuChoice.of(1));
        assertThat(FragmentationScorer.score(n, TWO_GPUS, d)).isEmpty();
        // a whole GPU on GPU 0: [0, 300, 0] -> 300, delta 0
        assertThat(FragmentationScorer.score(n, ONE_GPU, d)).hasValue(0);
    }

    @Test
    void fgd_prefers_the_node_it_defragments() {
        Distribution d = Distribution.single(SHARE_500);
        List<NodeView> nodes = List.of(node(8_000, 1000, 1000), node(8_000, 1000, 400));
        // A: delta 0 anywhere. B: before 400 (400 < 500); on GPU 1 -> [1000, 0] -> 0, delta -400.
        Placement p = PackingPolicies.fgd(d).place(nodes, TaskShape.of(1, 400, 1_000, 1_000)).orElseThrow();
        assertThat(p.nodeIndex()).isEqualTo(1);
        assertThat(p.gpus()).isEqualTo(GpuChoice.of(1));
        assertThat(p.score()).isEqualTo(-400);
    }

    @Test
    void bestfit_takes_the_node_with_least_leftover_and_the_tightest_gpu() {
        List<NodeView> nodes = List.of(new NodeView("a", new int[] {1000, 1000}, 8_000, 10_000, "T4", 8_000),
                new NodeView("b", new int[] {1000, 500}, 4_000, 10_000, "T4", 8_000));
        // a: 1500/2000 + 7000/8000 = 1.625; b: 1000/2000 + 3000/8000 = 0.875
        Placement p = PackingPolicies.bestFit().place(nodes, SHARE_500).orElseThrow();
        assertThat(p.nodeIndex()).isEqualTo(1);
        assertThat(p.gpus()).isEqualTo(GpuChoice.of(1));
        assertThat(p.score()).isEqualTo(0.875);
    }

    @Test
    void random_places_only_where_it_fits_and_is_deterministic_for_a_seed() {
        List<NodeView> nodes = List.of(node(8_000, 300), node(8_000, 1000, 1000, 1000), node(8_000, 0));
        PackingPolicy a = PackingPolicies.random(7);
        PackingPolicy b = PackingPolicies.random(7);
        for (int i = 0; i < 20; i++) {
            Placement pa = a.place(nodes, TWO_GPUS).orElseThrow();
            assertThat(pa).isEqualTo(b.place(nodes, TWO_GPUS).orElseThrow());
            assertThat(pa.nodeIndex()).isEqualTo(1);
            assertThat(pa.gpus().gpuIndexes()).hasSize(2).doesNotHaveDuplicates();
        }
        assertThat(a.place(nodes, TaskShape.of(4, 1000, 0, 0))).isEmpty();
    }

    @Test
    void distribution_keeps_the_most_common_shapes_up_to_the_coverage() {
        TaskShape a = SHARE_500;
        TaskShape b = ONE_GPU;
        TaskShape c = TWO_GPUS;
        List<TaskShape> tasks = List.of(a, b, a, c, a);
        assertThat(Distribution.of(tasks, 0.6).entries()).containsExactly(new Distribution.Entry(a, 1.0));
        assertThat(Distribution.of(tasks, 0.8).entries())
                .containsExactly(new Distribution.Entry(a, 0.75), new Distribution.Entry(b, 0.25));
    }

    @Test
    void bad_shapes_and_nodes_are_refused_naming_the_field() {
        assertThatThrownBy(() -> TaskShape.of(2, 500, 0, 0)).hasMessageContaining("gpuMilli must be 1000");
        assertThatThrownBy(() -> TaskShape.of(1, 0, 0, 0)).hasMessageContaining("gpuMilli must be within 1..1000");
        assertThatThrownBy(() -> TaskShape.of(0, 10, 0, 0)).hasMessageContaining("CPU-only");
        assertThatThrownBy(() -> node(8_000, 1200)).hasMessageContaining("gpuFreeMilli[0]");
        assertThatThrownBy(() -> Distribution.of(List.of(), 0.95)).hasMessageContaining("no tasks");
    }
}
