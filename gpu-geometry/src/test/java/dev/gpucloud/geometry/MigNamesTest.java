package dev.gpucloud.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;

/** Parsing profile names ({@code 1g.10gb+me}) and slots ({@code 3g.40gb@4}), good and bad. */
class MigNamesTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({"3g.40gb, 3, 40, false", "1g.10gb+me, 1, 10, true", "7g.141gb, 7, 141, false", "1g.6gb, 1, 6, false"})
    void goodProfileNamesParse(String text, int compute, int memory, boolean me) {
        MigProfileName name = MigProfileName.parse(text);
        assertThat(name.computeSlices()).isEqualTo(compute);
        assertThat(name.memoryGb()).isEqualTo(memory);
        assertThat(name.mediaExtensions()).isEqualTo(me);
        assertThat(name.toString()).isEqualTo(text);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "3g40gb      | is not of the form <compute slices>g.<memory>gb",
        "3g.40GB     | is not of the form",
        "3g.40gb+xe  | is not of the form",
        "<script>    | is not of the form",
        "8g.80gb     | asks for 8 compute slices; a MIG GPU has 1..7",
        "0g.10gb     | asks for 0 compute slices",
        "99999999g.1gb | asks for 99999999 compute slices",
        "1g.0gb      | has no memory (0gb)"})
    void badProfileNamesSayWhatIsWrong(String text, String reason) {
        assertThatThrownBy(() -> MigProfileName.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
        assertThat(MigProfileName.tryParse(text)).isEmpty();
    }

    @ParameterizedTest
    @NullAndEmptySource
    void anEmptyProfileNameIsRefused(String text) {
        assertThatThrownBy(() -> MigProfileName.parse(text)).hasMessageStartingWith("MIG profile name is empty");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"3g.40gb@4, 3g.40gb, 4", "1g.10gb+me@6, 1g.10gb+me, 6", "7g.80gb@0, 7g.80gb, 0"})
    void goodSlotsParse(String text, String profile, int start) {
        assertThat(MigSlot.parse(text)).isEqualTo(new MigSlot(profile, start));
        assertThat(MigSlot.tryParse(text)).contains(new MigSlot(profile, start));
        assertThat(MigSlot.parse(text).toString()).isEqualTo(text);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "3g.40gb@8   | the start after '@' must be a memory slice 0-7, was '8'",
        "3g.40gb@    | the start after '@' must be a memory slice 0-7, was ''",
        "3g.40gb@x   | was 'x'",
        "3g40gb@4    | MIG profile '3g40gb' is not of the form",
        "@4          | MIG profile name is empty",
        "MIG-4f2a    | is not of the form <profile>@<start 0-7>, e.g. 3g.40gb@4"})
    void badSlotsSayWhatIsWrong(String text, String reason) {
        assertThatThrownBy(() -> MigSlot.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
        assertThat(MigSlot.tryParse(text)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"MIG-4f2a, false", "3g.40gb@4, true", "x@, true"})
    void aSlotIsTextWithAnAt(String text, boolean slot) {
        assertThat(MigSlot.looksLikeSlot(text)).isEqualTo(slot);
    }
}
