package dev.gpucloud.contracts.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckTest {

    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    @Test
    void an_over_long_string_is_refused_naming_the_field_and_showing_a_clipped_value() {
        String huge = "s3://bucket/" + "x".repeat(900_000);
        assertThatThrownBy(() -> Check.optionalText(huge, Limits.CHECKPOINT_LOCATION, "spec.checkpoint.location"))
                .hasMessageStartingWith("field 'spec.checkpoint.location' must be at most 2048 characters, was 900012")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200));
    }

    @Test
    void nul_and_unpaired_surrogates_are_refused() {
        assertThatThrownBy(() -> Check.text("job\u0000x", Limits.ID, "jobId"))
                .hasMessage("field 'jobId' must not contain a NUL character (at 3)");
        assertThatThrownBy(() -> Check.text("a\ud800b", Limits.ID, "jobId"))
                .hasMessageContaining("unpaired surrogate");
        assertThat(Check.text("gpu-\ud83d\ude80", Limits.ID, "jobId")).isEqualTo("gpu-\ud83d\ude80");
    }

    @Test
    void blank_required_text_and_missing_text_are_refused() {
        assertThatThrownBy(() -> Check.text(" ", Limits.ID, "jobId")).hasMessage("field 'jobId' must not be blank");
        assertThatThrownBy(() -> Check.text(null, Limits.ID, "jobId")).hasMessage("missing required field 'jobId'");
    }

    @Test
    void numbers_and_sizes_name_the_range() {
        assertThatThrownBy(() -> Check.number(0, Limits.WORKERS, "spec.workers"))
                .hasMessage("field 'spec.workers' must be within 1..1024, was 0");
        assertThatThrownBy(() -> Check.size(List.of(), Limits.COMMAND, "spec.command"))
                .hasMessage("field 'spec.command' must have 1..256 entries, had 0");
    }

    @Test
    void times_before_the_epoch_or_far_ahead_are_refused() {
        assertThatThrownBy(() -> Check.eventTime(Instant.parse("1970-01-01T00:00:00Z"), NOW, "from"))
                .hasMessageStartingWith("field 'from' must be within 2020-01-01T00:00:00Z");
        assertThatThrownBy(() -> Check.eventTime(Instant.parse("+1000000000-12-31T00:00:00Z"), NOW, "from"))
                .hasMessageStartingWith("field 'from' must be within");
        assertThatThrownBy(() -> Check.eventTime(NOW.plusSeconds(7200), NOW, "to"))
                .hasMessageStartingWith("field 'to' is in the future");
        assertThat(Check.eventTime(NOW.plusSeconds(60), NOW, "to")).isEqualTo(NOW.plusSeconds(60));
    }

    @Test
    void a_deadline_must_lie_ahead_within_the_horizon() {
        assertThatThrownBy(() -> Check.deadline(Instant.parse("2020-06-01T00:00:00Z"), NOW, "spec.deadline"))
                .hasMessageStartingWith("field 'spec.deadline' must be in the future");
        assertThatThrownBy(() -> Check.deadline(NOW.plus(Limits.DEADLINE_HORIZON).plusSeconds(1), NOW, "spec.deadline"))
                .hasMessageStartingWith("field 'spec.deadline' must be within 366 days");
        assertThat(Check.deadline(null, NOW, "spec.deadline")).isNull();
    }

    @Test
    void clipping_escapes_control_characters() {
        assertThat(Check.clip("a\u0000b\nc")).isEqualTo("a\\u0000b\\u000ac");
        assertThat(Check.clip("y".repeat(100))).hasSize(Check.SHOWN + 3).endsWith("...");
    }
}
