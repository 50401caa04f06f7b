package dev.gpucloud.geometry;

import static dev.gpucloud.geometry.GpuAdmission.Verdict.ADMITTED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.geometry.GpuAdmission.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One GPU, one more allocation: whole, a fraction, or a MIG slot. */
class GpuAdmissionTest {

    private static final MigFamily A100_40 = NvidiaMigTable.A100_40GB;
    private static final MigFamily A30 = NvidiaMigTable.A30_24GB;

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "a whole GPU on an idle GPU,                    false, 0,    1000, ADMITTED",
        "a whole GPU on a GPU with a fraction,          false, 1,    1000, HELD",
        "a whole GPU on a GPU held whole,               false, 1000, 1000, HELD",
        "a fraction on an idle GPU,                     false, 0,    250,  ADMITTED",
        "a fraction that fills the GPU exactly,         false, 750,  250,  ADMITTED",
        "a fraction one milli too many,                 false, 751,  250,  TOO_LITTLE_FREE",
        "a fraction on a GPU held whole,                false, 1000, 1,    TOO_LITTLE_FREE",
        "a whole GPU on a GPU in MIG mode,              true,  0,    1000, IN_MIG_MODE",
        "a fraction on a GPU in MIG mode,               true,  0,    125,  IN_MIG_MODE",
    })
    void wholeAndFractions(String name, boolean mig, int usedMilli, int milli, Verdict verdict) {
        assertThat(GpuAdmission.share(mig ? A100_40 : null, usedMilli, milli)).isEqualTo(verdict);
        assertThat(GpuAdmission.shareFits(mig ? A100_40 : null, usedMilli, milli)).isEqualTo(verdict == ADMITTED);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "a slot on a free A100,                          A100,  3g.20gb,    4, '',        ADMITTED",
        "a slot on a GPU not in MIG mode,                none,  3g.20gb,    4, '',        NOT_IN_MIG_MODE",
        "a profile of another family,                    A100,  3g.40gb,    4, '',        PROFILE_NOT_OFFERED",
        "a start NVIDIA does not allow,                  A100,  4g.20gb,    4, '',        START_NOT_ALLOWED",
        "a 1g on the eighth slice,                       A100,  1g.5gb,     7, '',        START_NOT_ALLOWED",
        "a slot over a held slice,                       A100,  2g.10gb,    2, 3,         SLICES_HELD",
        "a slot beside a held slice,                     A100,  2g.10gb,    4, 3,         ADMITTED",
        "a second +me instance,                          A100,  1g.5gb+me,  0, 6 me,      MEDIA_ENGINES_HELD",
        "a plain 1g beside a +me instance,               A100,  1g.5gb,     0, 6 me,      ADMITTED",
        "a +me on a GPU whose media engines are free,    A100,  1g.5gb+me,  0, 4 5 6 7,   ADMITTED",
        "a 7g over a +me instance,                       A100,  7g.40gb,    0, 6 me,      SLICES_HELD",
        "an A30 slot,                                    A30,   2g.12gb,    2, 0,         ADMITTED",
        "an A30 +me beside an A30 +me,                   A30,   1g.6gb+me,  3, 0 1 me,    MEDIA_ENGINES_HELD",
        "an A30 start past its four slices,              A30,   1g.6gb,     4, '',        START_NOT_ALLOWED",
        "an A100 profile on an A30,                      A30,   1g.5gb,     0, '',        PROFILE_NOT_OFFERED",
    })
    void migSlots(String name, String family, String profile, int start, String held, Verdict verdict) {
        MigFamily f = switch (family) {
            case "A100" -> A100_40;
            case "A30" -> A30;
            default -> null;
        };
        int mask = f == null ? 0 : MigPlacementTest.mask(f, held);
        assertThat(GpuAdmission.slot(f, profile, start, mask)).isEqualTo(verdict);
    }
}
