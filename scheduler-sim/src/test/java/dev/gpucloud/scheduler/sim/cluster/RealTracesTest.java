package dev.gpucloud.scheduler.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gpucloud.scheduler.sim.trace.Loaded;
import dev.gpucloud.scheduler.sim.trace.MuriTraceLoader;
import dev.gpucloud.scheduler.sim.trace.OpenbLoader;
import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import dev.gpucloud.scheduler.sim.trace.PhillyTraceLoader;
import dev.gpucloud.scheduler.sim.trace.TraceFixtures;
import dev.gpucloud.scheduler.sim.trace.TraceJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Checks the loaders and cluster models against the real traces in shared/traces, with the counts the
 * traces README gives. Optional: each test is skipped, saying so, where this checkout has no such file.
 */
class RealTracesTest {

    private static Path realFile(String relative) {
        Path dir = TraceFixtures.realTraces().orElse(null);
        assumeTrue(dir != null, "skipped: no shared/traces directory here (set -Dgpucloud.traces=DIR to run it)");
        Path file = dir.resolve(relative);
        assumeTrue(Files.isRegularFile(file), "skipped: " + file + " is not here");
        return file;
    }

    @Test
    void the_openb_node_list_builds_1213_hosts_with_6212_gpus_of_7_models() {
        ClusterModel openb = OpenbCluster.fromNodeList(realFile("openb/openb_node_list_gpu_node.csv"));

        assertThat(openb.hostCount()).isEqualTo(1_213);
        assertThat(openb.gpuCount()).isEqualTo(6_212);
        assertThat(openb.gpusByModel()).containsOnlyKeys("P100", "T4", "V100M16", "V100M32", "G2", "G3", "A10");
    }

    @Test
    void the_openb_pod_list_loads_whole() {
        Loaded<OpenbPod> pods = OpenbLoader.loadPods(realFile("openb/openb_pod_list_multigpu50.csv"));
        assertThat(pods.size()).isEqualTo(9_061);
        assertThat(pods.skippedRows()).isZero();
    }

    @Test
    void the_philly_list_has_82247_jobs_with_the_published_gpu_histogram() {
        Loaded<TraceJob> philly = PhillyTraceLoader.load(realFile("philly/philly.csv"));

        assertThat(philly.size()).isEqualTo(82_247);
        Map<Integer, Long> histogram = philly.items().stream()
                .collect(Collectors.groupingBy(TraceJob::gpus, TreeMap::new, Collectors.counting()));
        assertThat(histogram).containsExactlyEntriesOf(new TreeMap<>(Map.of(1, 76_627L, 2, 1_818L, 4, 1_870L,
                8, 1_643L, 12, 7L, 16, 199L, 24, 7L, 32, 67L, 64, 6L, 128, 3L)));
        assertThat(philly.items().get(0).submitMillis()).isZero();
        assertThat(philly.items().stream().map(TraceJob::tenant).distinct().count()).isEqualTo(15);
    }

    @Test
    void muri_trace2_has_5755_jobs_and_487_over_eight_gpus() {
        Loaded<TraceJob> trace2 = MuriTraceLoader.load(realFile("muri/trace2.csv"));

        assertThat(trace2.size()).isEqualTo(5_755);
        assertThat(trace2.items().stream().filter(j -> j.gpus() > 8).count()).isEqualTo(487);
    }

    @Test
    void muri_trace4_has_2638_jobs_none_over_eight_gpus() {
        Loaded<TraceJob> trace4 = MuriTraceLoader.load(realFile("muri/trace4.csv"));

        assertThat(trace4.size()).isEqualTo(2_638);
        assertThat(trace4.items()).allSatisfy(j -> assertThat(j.gpus()).isLessThanOrEqualTo(8));
    }
}
