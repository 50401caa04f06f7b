package dev.gpucloud.scheduler.sim.trace;

import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.fixture;
import static dev.gpucloud.scheduler.sim.trace.TraceFixtures.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CSV layer every loader shares: header, line numbers, quoting, blank lines, lenient mode. */
class CsvFileTest {

    @TempDir
    Path dir;

    private record Pair(int line, String a, String b) {
    }

    private List<Pair> readAB(Path file, ErrorMode mode) {
        List<Pair> rows = new ArrayList<>();
        CsvFile.read(file, List.of("a", "b"), false, mode, r -> new Pair(r.line(), r.text("a"), r.text("b")), rows::add);
        return rows;
    }

    @Test
    void columns_are_found_by_name_in_any_order_and_extra_columns_are_ignored() {
        Path file = write(dir, "t.csv", "extra,b,a", "x,2,1");
        assertThat(readAB(file, ErrorMode.STRICT)).containsExactly(new Pair(2, "1", "2"));
    }

    @Test
    void crlf_endings_a_byte_order_mark_and_blank_lines_are_handled_and_lines_still_count() throws IOException {
        Path file = dir.resolve("t.csv");
        Files.writeString(file, "\uFEFFa,b\r\n1,2\r\n\r\n3,4\r\n\r\n", StandardCharsets.UTF_8);
        assertThat(readAB(file, ErrorMode.STRICT)).containsExactly(new Pair(2, "1", "2"), new Pair(4, "3", "4"));
    }

    @Test
    void a_quoted_field_holds_commas_and_doubled_quotes() {
        Path file = write(dir, "t.csv", "a,b", "\"x, y\",\"say \"\"hi\"\"\"");
        assertThat(readAB(file, ErrorMode.STRICT)).containsExactly(new Pair(2, "x, y", "say \"hi\""));
    }

    @Test
    void an_unclosed_quote_is_an_error_of_its_line() {
        Path file = write(dir, "t.csv", "a,b", "1,2", "\"open,2");
        assertThatThrownBy(() -> readAB(file, ErrorMode.STRICT))
                .hasMessage("t.csv:3: a quoted field is not closed");
    }

    @Test
    void a_row_with_the_wrong_number_of_fields_is_an_error() {
        Path file = write(dir, "t.csv", "a,b", "1,2,3");
        assertThatThrownBy(() -> readAB(file, ErrorMode.STRICT))
                .hasMessage("t.csv:2: row has 3 fields, the header has 2");
    }

    @Test
    void a_required_column_missing_from_the_header_fails_even_when_lenient() {
        Path file = write(dir, "t.csv", "a,c", "1,2");
        assertThatThrownBy(() -> readAB(file, ErrorMode.LENIENT))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("t.csv:1: column 'b': missing from the header (found: a,c)");
    }

    @Test
    void a_column_named_twice_in_the_header_is_an_error() {
        Path file = write(dir, "t.csv", "a,b,a", "1,2,3");
        assertThatThrownBy(() -> readAB(file, ErrorMode.STRICT))
                .hasMessage("t.csv:1: column 'a': appears twice in the header");
    }

    @Test
    void an_empty_file_fails_naming_the_columns_it_needs() {
        assertThatThrownBy(() -> readAB(fixture("empty.csv"), ErrorMode.LENIENT))
                .hasMessage("empty.csv: file is empty; expected a header row with columns a, b");
    }

    @Test
    void a_missing_file_fails_naming_it() {
        assertThatThrownBy(() -> readAB(dir.resolve("absent.csv"), ErrorMode.STRICT))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("absent.csv: no such file (");
    }

    @Test
    void lenient_mode_counts_every_skipped_row_and_keeps_the_first_messages() {
        List<String> lines = new ArrayList<>(List.of("a,b"));
        for (int i = 0; i < 25; i++) {
            lines.add("1,");
        }
        lines.add("5,6");
        Path file = write(dir, "t.csv", lines.toArray(String[]::new));
        List<Pair> rows = new ArrayList<>();
        Loaded<Void> result = CsvFile.read(file, List.of("a", "b"), false, ErrorMode.LENIENT,
                r -> new Pair(r.line(), r.text("a"), r.text("b")), rows::add);
        assertThat(rows).containsExactly(new Pair(27, "5", "6"));
        assertThat(result.skippedRows()).isEqualTo(25);
        assertThat(result.problems()).hasSize(Loaded.MAX_PROBLEMS)
                .first().isEqualTo("t.csv:2: column 'b': is empty");
    }

    @Test
    void comment_lines_are_skipped_only_when_asked() {
        Path file = write(dir, "t.csv", "# note", "a,b", "# another", "1,2");
        List<Pair> rows = new ArrayList<>();
        CsvFile.read(file, List.of("a", "b"), true, ErrorMode.STRICT, r -> new Pair(r.line(), r.text("a"), r.text("b")),
                rows::add);
        assertThat(rows).containsExactly(new Pair(4, "1", "2"));
        assertThatThrownBy(() -> readAB(file, ErrorMode.STRICT)).hasMessageContaining("t.csv:1: column 'a': missing");
    }
}
