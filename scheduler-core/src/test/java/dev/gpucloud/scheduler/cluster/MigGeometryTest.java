package dev.gpucloud.scheduler.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MigGeometryTest {

    private static final MigGeometry A100_80 = MigGeometry.of("A100-SXM4-80GB", 81_920).orElseThrow();

    private static int mask(String used) {
        int m = 0;
        for (String s : used.split(" ")) {
            if (!s.isBlank()) {
                m |= 1 << Integer.parseInt(s);
            }
        }
        return m;
    }

    @ParameterizedTest(name = "{0} on slices used [{1}] starts at {2}")
    @CsvSource({
            "1g.10gb, '', 6",        // small slices fill from the top: 0..3 stay free for a 4g
            "1g.10gb, 6, 5",
            "1g.10gb, 0 1 2 3 4 5 6, -1", // slice 7 alone takes no 1g (7 compute slices)
            "1g.20gb, 6 7, 4",
            "2g.20gb, '', 4",
            "3g.40gb, '', 4",
            "3g.40gb, 0 1 2 3, 4",
            "3g.40gb, 4, 0",
            "3g.40gb, 0 4, -1",
            "4g.40gb, 4 5 6 7, 0",
            "4g.40gb, 3, -1",
            "7g.80gb, '', 0",
            "7g.80gb, 7, -1",
    })
    void followsNvidiasPlacementRules(String profile, String used, int start) {
        MigProfile p = A100_80.profile(profile).orElseThrow();
        assertThat(A100_80.bestStart(p, mask(used))).isEqualTo(start);
    }

    @ParameterizedTest(name = "{0} with {1} MiB offers {2}")
    @CsvSource({
            "A100-SXM4-40GB, 40960, 1g.5gb",
            "A100-SXM4-40GB, 40960, 3g.20gb",
            "A100-SXM4-80GB, 81920, 3g.40gb",
            "H100-SXM5-80GB, 81559, 7g.80gb",
            "H100-NVL, 95830, 3g.47gb",
            "H200, 143771, 1g.18gb",
            "A30, 24576, 2g.12gb",
    })
    void knowsEachGpusProfiles(String model, long memory, String profile) {
        assertThat(MigGeometry.of(model, memory).orElseThrow().profile(profile)).isPresent();
    }

    @ParameterizedTest
    @CsvSource({"A10G, 24576", "V100-SXM2-16GB, 16384", "T4, 15360"})
    void gpusWithoutMigHaveNoGeometry(String model, long memory) {
        assertThat(MigGeometry.of(model, memory)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"A100-SXM4-40GB, 40960, 3g.40gb", "A30, 24576, 3g.20gb", "A100-SXM4-80GB, 81920, 1g.5gb"})
    void rejectsProfilesOfOtherGpus(String model, long memory, String profile) {
        assertThat(MigGeometry.of(model, memory).orElseThrow().profile(profile)).isEmpty();
    }
}
