package dev.gpucloud.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where the scheduler puts a profile on a partly used GPU: a legal free start that keeps room for big ones. */
class MigPlacementTest {

    /** The occupancy of the listed memory slices ("me" for the media engines). */
    static int mask(MigFamily family, String used) {
        int m = 0;
        for (String s : used.split(" ")) {
            if (s.equals("me")) {
                m |= family.mediaBit();
            } else if (!s.isBlank()) {
                m |= 1 << Integer.parseInt(s);
            }
        }
        return m;
    }

    @ParameterizedTest(name = "{0}: {1} on slices used [{2}] starts at {3}")
    @CsvSource({
        "A100-SXM4-80GB, 1g.10gb, '', 6",              // small slices fill from the top: 0..3 stay free for a 4g
        "A100-SXM4-80GB, 1g.10gb, 6, 5",
        "A100-SXM4-80GB, 1g.10gb, 0 1 2 3 4 5 6, -1",  // slice 7 alone takes no 1g (7 compute slices)
        "A100-SXM4-80GB, 1g.20gb, 6 7, 4",
        "A100-SXM4-80GB, 2g.20gb, '', 4",
        "A100-SXM4-80GB, 3g.40gb, '', 4",
        "A100-SXM4-80GB, 3g.40gb, 0 1 2 3, 4",
        "A100-SXM4-80GB, 3g.40gb, 4, 0",
        "A100-SXM4-80GB, 3g.40gb, 0 4, -1",
        "A100-SXM4-80GB, 4g.40gb, 4 5 6 7, 0",
        "A100-SXM4-80GB, 4g.40gb, 3, -1",
        "A100-SXM4-80GB, 7g.80gb, '', 0",
        "A100-SXM4-80GB, 7g.80gb, 7, -1",
        "A100-SXM4-80GB, 1g.10gb+me, '', 6",
        "A100-SXM4-80GB, 1g.10gb+me, me, -1",           // one +me instance per GPU
        "A100-SXM4-80GB, 1g.10gb, me, 6",               // the media engines do not hold a plain slice
        "A100-SXM4-40GB, 1g.10gb, '', 6",
        "A30, 1g.6gb, '', 3",
        "A30, 2g.12gb, '', 2",
        "A30, 2g.12gb, 2, 0",
        "A30, 2g.12gb+me, 0 1 me, -1",
        "A30, 4g.24gb, 3, -1",
        "H200, 3g.71gb, '', 4",
    })
    void followsNvidiasPlacementRules(String model, String profile, String used, int start) {
        MigFamily family = NvidiaMigTable.forGpu(model, model.contains("40GB") ? 40_960 : 81_920).orElseThrow();
        MigProfile p = family.profile(profile).orElseThrow();
        assertThat(family.bestStart(p, mask(family, used))).isEqualTo(start);
    }

    @ParameterizedTest(name = "{0} after {1} on [{2}] is {3}% full")
    @CsvSource({"A100-SXM4-80GB, 3g.40gb, '', 50", "A100-SXM4-80GB, 1g.10gb, 0 1 2 3, 62",
        "A100-SXM4-80GB, 7g.80gb, 0, -1", "A30, 1g.6gb, 0 1, 75", "A30, 1g.6gb+me, me, -1"})
    void percentFullAfterTheBestStart(String model, String profile, String used, int percent) {
        MigFamily family = NvidiaMigTable.forGpu(model, 81_920).orElseThrow();
        assertThat(family.percentAfter(family.ordinal(profile), mask(family, used))).isEqualTo(percent);
    }
}
