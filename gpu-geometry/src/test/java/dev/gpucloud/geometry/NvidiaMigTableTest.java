package dev.gpucloud.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The table against NVIDIA's MIG User Guide: every family, every profile, its slices and starts. */
class NvidiaMigTableTest {

    /** Each entry: name:computeSlices:memorySlices:starts ("0-6" for 0..6). */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "A30 24GB       | A30            | 24576  | 4 | 4 | 1g.6gb:1:1:0-3 1g.6gb+me:1:1:0-3 2g.12gb:2:2:0,2 2g.12gb+me:2:2:0,2 4g.24gb:4:4:0",
        "A100 40GB      | A100-SXM4-40GB | 40960  | 8 | 7 | 1g.5gb:1:1:0-6 1g.5gb+me:1:1:0-6 1g.10gb:1:2:0,2,4,6 2g.10gb:2:2:0,2,4 3g.20gb:3:4:0,4 4g.20gb:4:4:0 7g.40gb:7:8:0",
        "A100 80GB      | A100-SXM4-80GB | 81920  | 8 | 7 | 1g.10gb:1:1:0-6 1g.10gb+me:1:1:0-6 1g.20gb:1:2:0,2,4,6 2g.20gb:2:2:0,2,4 3g.40gb:3:4:0,4 4g.40gb:4:4:0 7g.80gb:7:8:0",
        "H100 80GB      | H100-SXM5-80GB | 81559  | 8 | 7 | 1g.10gb:1:1:0-6 1g.10gb+me:1:1:0-6 1g.20gb:1:2:0,2,4,6 2g.20gb:2:2:0,2,4 3g.40gb:3:4:0,4 4g.40gb:4:4:0 7g.80gb:7:8:0",
        "H100 NVL 94GB  | H100 NVL       | 95830  | 8 | 7 | 1g.12gb:1:1:0-6 1g.12gb+me:1:1:0-6 1g.24gb:1:2:0,2,4,6 2g.24gb:2:2:0,2,4 3g.47gb:3:4:0,4 4g.47gb:4:4:0 7g.94gb:7:8:0",
        "H200 141GB     | H200           | 144384 | 8 | 7 | 1g.18gb:1:1:0-6 1g.18gb+me:1:1:0-6 1g.35gb:1:2:0,2,4,6 2g.35gb:2:2:0,2,4 3g.71gb:3:4:0,4 4g.71gb:4:4:0 7g.141gb:7:8:0"})
    void everyFamilyHasNvidiasProfilesAndStarts(String family, String model, long memoryMib, int memorySlices,
            int computeSlices, String table) {
        MigFamily f = NvidiaMigTable.forGpu(model, memoryMib).orElseThrow();
        assertThat(f.memorySlices()).isEqualTo(memorySlices);
        assertThat(f.computeSlices()).isEqualTo(computeSlices);
        List<String> expected = Arrays.stream(table.split(" ")).map(e -> e.split(":")[0]).toList();
        assertThat(f.profiles()).extracting(MigProfile::name).containsExactlyElementsOf(expected);
        for (String entry : table.split(" ")) {
            String[] parts = entry.split(":");
            MigProfile p = f.profile(parts[0]).orElseThrow();
            assertThat(p.computeSlices()).as(parts[0]).isEqualTo(Integer.parseInt(parts[1]));
            assertThat(p.memorySlices()).as(parts[0]).isEqualTo(Integer.parseInt(parts[2]));
            List<Integer> starts = parts[3].contains("-")
                    ? java.util.stream.IntStream.rangeClosed(0, parts[3].charAt(2) - '0').boxed().toList()
                    : Arrays.stream(parts[3].split(",")).map(Integer::valueOf).toList();
            assertThat(p.starts()).as(parts[0]).isEqualTo(starts);
            assertThat(p.mediaExtensions()).as(parts[0]).isEqualTo(parts[0].endsWith("+me"));
        }
    }

    @ParameterizedTest(name = "{0} with {1} MiB is {2}")
    @CsvSource({
        "A30, 24576, A30 24GB",
        "NVIDIA A30, 24062, A30 24GB",
        "A100-SXM4-40GB, 40960, A100 40GB",
        "A100-PCIE-40GB, 40536, A100 40GB",
        "A100-SXM4-80GB, 81920, A100/H100 80GB",
        "H100-SXM5-80GB, 81559, A100/H100 80GB",
        "H100 NVL, 95830, H100 94GB",
        "H200, 143771, H200 141GB",
    })
    void modelAndMemoryPickTheFamily(String model, long memoryMib, String family) {
        assertThat(NvidiaMigTable.forGpu(model, memoryMib)).map(MigFamily::name).contains(family);
    }

    @ParameterizedTest(name = "{0} alone is {1}")
    @CsvSource({
        "A30, A30 24GB",
        "A100-SXM4-40GB, A100 40GB",
        "A100-SXM4-80GB, A100/H100 80GB",
        "H100-SXM5-80GB, A100/H100 80GB",
        "H100-NVL, H100 94GB",
        "H200-SXM5-141GB, H200 141GB",
    })
    void aModelNameAlonePicksTheFamilyWhenItSaysTheSize(String model, String family) {
        assertThat(NvidiaMigTable.forModelName(model)).map(MigFamily::name).contains(family);
    }

    @ParameterizedTest
    @CsvSource({"A10G, 24576", "V100-SXM2-16GB, 16384", "T4, 15360", "L40S, 46068"})
    void gpusWithoutMigHaveNoFamily(String model, long memoryMib) {
        assertThat(NvidiaMigTable.forGpu(model, memoryMib)).isEmpty();
        assertThat(NvidiaMigTable.forModelName(model)).isEmpty();
    }

    @Test
    void aModelNameWithoutItsSizeIsAmbiguous() {
        assertThat(NvidiaMigTable.forModelName("A100-PCIE")).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"A100-SXM4-40GB, 40960, 3g.40gb", "A30, 24576, 3g.20gb", "A100-SXM4-80GB, 81920, 1g.5gb",
        "A30, 24576, 1g.5gb+me"})
    void profilesOfOtherFamiliesAreNotOffered(String model, long memoryMib, String profile) {
        assertThat(NvidiaMigTable.forGpu(model, memoryMib).orElseThrow().profile(profile)).isEmpty();
    }

    @Test
    void anUnlistedMigGpuOffersNothing() {
        MigFamily unlisted = NvidiaMigTable.unlisted("B200");
        assertThat(unlisted.profiles()).isEmpty();
        assertThat(unlisted.profile("1g.10gb")).isEmpty();
    }

    @Test
    void aProfileIsKnownWhenSomeFamilyOffersIt() {
        assertThat(NvidiaMigTable.offeredByAny("1g.6gb+me")).isTrue();
        assertThat(NvidiaMigTable.offeredByAny("7g.141gb")).isTrue();
        assertThat(NvidiaMigTable.offeredByAny("7g.99gb")).isFalse();
        assertThat(NvidiaMigTable.offeredByAny("3g.20gb+me")).isFalse();
    }
}
