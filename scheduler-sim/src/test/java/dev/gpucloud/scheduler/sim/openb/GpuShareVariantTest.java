package dev.gpucloud.scheduler.sim.openb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.scheduler.sim.trace.OpenbPod;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Variants of a pod list with a chosen share of GPU-sharing pods. */
class GpuShareVariantTest {

    /** 10 CPU-only pods, 40 sharing pods (fractions 250 and 500), 40 one-GPU pods, 20 four-GPU pods. */
    private static List<OpenbPod> pods() {
        List<OpenbPod> pods = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            pods.add(new OpenbPod("cpu-" + i, 4000, 8192, 0, 0));
        }
        for (int i = 0; i < 40; i++) {
            pods.add(new OpenbPod("share-" + i, 2000, 4096, 1, i % 2 == 0 ? 250 : 500));
        }
        for (int i = 0; i < 40; i++) {
            pods.add(new OpenbPod("one-" + i, 8000, 16384, 1, 1000));
        }
        for (int i = 0; i < 20; i++) {
            pods.add(new OpenbPod("four-" + i, 32000, 65536, 4, 1000));
        }
        return pods;
    }

    @ParameterizedTest(name = "{0} %")
    @ValueSource(ints = {0, 20, 40, 60, 80, 100})
    void theShareOfGpuPodsThatShareIsTheOneAskedFor(int share) {
        List<OpenbPod> variant = GpuShareVariant.of(pods(), share, 7);

        assertThat(GpuShareVariant.sharePercent(variant)).isCloseTo(share, org.assertj.core.data.Offset.offset(0.5));
        assertThat(variant).hasSize(110);
        assertThat(variant.subList(0, 10)).as("CPU-only pods stay").isEqualTo(pods().subList(0, 10));
        assertThat(variant.stream().filter(p -> p.numGpu() > 0).count()).as("GPU pods stay GPU pods").isEqualTo(100);
        Set<Integer> fractions = variant.stream().filter(OpenbPod::isShare).map(OpenbPod::gpuMilli)
                .collect(Collectors.toSet());
        assertThat(fractions).as("fraction sizes come from the list's own").isSubsetOf(250, 500);
    }

    @Test
    void oneGpuPodsShareFirstAndAMultiGpuPodKeepsItsCpuAndMemoryPerGpu() {
        List<OpenbPod> at80 = GpuShareVariant.of(pods(), 80, 7); // 80 sharing: all 40 one-GPU pods, no four-GPU one
        assertThat(at80.stream().filter(p -> p.name().startsWith("one-")).allMatch(OpenbPod::isShare)).isTrue();
        assertThat(at80.stream().filter(p -> p.name().startsWith("four-")).noneMatch(OpenbPod::isShare)).isTrue();

        List<OpenbPod> at100 = GpuShareVariant.of(pods(), 100, 7);
        OpenbPod four = at100.stream().filter(p -> p.name().equals("four-3")).findFirst().orElseThrow();
        assertThat(four.numGpu()).isEqualTo(1);
        assertThat(four.cpuMilli()).isEqualTo(8000);
        assertThat(four.memoryMib()).isEqualTo(16384);
    }

    @Test
    void loweringTheShareGivesSharingPodsTheirGpuWhole() {
        List<OpenbPod> at20 = GpuShareVariant.of(pods(), 20, 7);

        assertThat(at20.stream().filter(p -> p.name().startsWith("share-") && p.gpuMilli() == 1000).count())
                .isEqualTo(20);
    }

    @Test
    void aVariantIsTheSameForItsSeed() {
        assertThat(GpuShareVariant.of(pods(), 60, 7)).isEqualTo(GpuShareVariant.of(pods(), 60, 7))
                .isNotEqualTo(GpuShareVariant.of(pods(), 60, 8));
    }

    @Test
    void aShareOutOfRangeOrAListWithoutSharingPodsIsRefused() {
        assertThatThrownBy(() -> GpuShareVariant.of(pods(), 101, 7)).hasMessageContaining("0..100");
        List<OpenbPod> noShares = pods().stream().filter(p -> !p.isShare()).toList();
        assertThatThrownBy(() -> GpuShareVariant.of(noShares, 50, 7)).hasMessageContaining("no GPU-sharing pod");
        assertThat(GpuShareVariant.of(noShares, 0, 7)).isEqualTo(noShares);
    }
}
