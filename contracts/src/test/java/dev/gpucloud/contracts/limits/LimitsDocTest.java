package dev.gpucloud.contracts.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The docs carry the limits table exactly as {@link Limits} defines it. */
class LimitsDocTest {

    @Test
    void docs_carry_the_current_limits_table() throws Exception {
        Path docs = Path.of("..", "docs");
        for (String file : LimitsDoc.FILES) {
            String text = Files.readString(docs.resolve(file), StandardCharsets.UTF_8);
            assertThat(LimitsDoc.render(text, file))
                    .as("docs/%s is stale: run ./mvnw -B -q -pl contracts compile && java -cp contracts/target/classes "
                            + "dev.gpucloud.contracts.limits.LimitsDoc docs", file)
                    .isEqualTo(text);
        }
    }

    @Test
    void every_limit_has_a_reason_and_a_field() {
        for (Limit limit : Limits.all()) {
            assertThat(limit.reason()).as(limit.name()).isNotBlank();
            assertThat(limit.appliesTo()).as(limit.name()).isNotBlank();
        }
    }

    @Test
    void no_text_limit_reaches_the_json_readers_string_limit() {
        for (Limit limit : Limits.all()) {
            if (limit.kind() == Limit.Kind.TEXT && limit != Limits.RECORD && limit != Limits.SPEC_TEXT) {
                assertThat(limit.max()).as(limit.name()).isLessThan(64 * 1024 + 1);
            }
        }
    }
}
