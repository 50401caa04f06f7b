package dev.gpucloud.agent.logs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.JobLogChunk;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineCutterTest {

    static final Instant AT = Instant.parse("2026-12-07T10:00:00Z");

    static LineCutter.Cut cut(byte[] bytes, boolean flush, boolean last) {
        return LineCutter.cut(bytes, bytes.length, 100, AT, flush, last);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void linesEndAtNewlinesWithTheirOffsetsAndWithoutCarriageReturns() {
        LineCutter.Cut cut = cut(utf8("one\r\ntwo\n\nthree"), false, false);
        assertThat(cut.lines()).extracting(JobLogChunk.Line::text).containsExactly("one", "two", "");
        assertThat(cut.lines()).extracting(JobLogChunk.Line::offset).containsExactly(100L, 105L, 109L);
        assertThat(cut.lines()).noneMatch(JobLogChunk.Line::continued);
        assertThat(cut.consumed()).isEqualTo(10); // "three" waits for its newline
    }

    @Test
    void anUnfinishedLineGoesWhenFlushedMarkedContinuedUnlessItIsTheLast() {
        assertThat(cut(utf8("50%|###"), true, false).lines()).singleElement()
                .satisfies(l -> assertThat(l.continued()).isTrue());
        LineCutter.Cut last = cut(utf8("done"), true, true);
        assertThat(last.lines()).singleElement().satisfies(l -> {
            assertThat(l.text()).isEqualTo("done");
            assertThat(l.continued()).isFalse();
        });
        assertThat(last.consumed()).isEqualTo(4);
    }

    @Test
    void aLineOverSixtyFourKibGoesInPiecesThatTogetherAreTheLine() {
        byte[] line = new byte[200 * 1024 + 1];
        Arrays.fill(line, (byte) 'x');
        line[line.length - 1] = '\n';
        LineCutter.Cut cut = cut(line, false, false);
        assertThat(cut.lines()).hasSize(4);
        assertThat(cut.lines()).extracting(JobLogChunk.Line::continued).containsExactly(true, true, true, false);
        assertThat(cut.lines()).extracting(JobLogChunk.Line::offset)
                .containsExactly(100L, 100L + 65536, 100L + 2 * 65536, 100L + 3 * 65536);
        assertThat(cut.lines().stream().mapToInt(l -> l.text().length()).sum()).isEqualTo(200 * 1024);
        assertThat(cut.consumed()).isEqualTo(line.length);
    }

    @Test
    void binaryAndControlBytesAreEscapedAndTabsAndValidUtf8Kept() {
        byte[] bytes = {'a', '\t', 'b', 0x1B, '[', '0', 'm', (byte) 0xFF, '\\', (byte) 0xC3, (byte) 0xA9, 0x00, '\n'};
        assertThat(cut(bytes, false, false).lines()).singleElement()
                .satisfies(l -> assertThat(l.text()).isEqualTo("a\tb\\x1b[0m\\xff\\\\é\\x00"));
        // an overlong form and a lone continuation byte are not UTF-8
        assertThat(cut(new byte[] {(byte) 0xC0, (byte) 0xAF, (byte) 0x80, '\n'}, false, false).lines().get(0).text())
                .isEqualTo("\\xc0\\xaf\\x80");
    }

    @Test
    void aPieceIsNeverCutInsideACharacter() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("a".repeat(65535).getBytes(StandardCharsets.UTF_8));
        out.writeBytes(utf8("€€\n")); // the first € straddles the 64 KiB boundary
        LineCutter.Cut cut = cut(out.toByteArray(), false, false);
        assertThat(cut.lines()).hasSize(2);
        assertThat(cut.lines().get(0).text()).hasSize(65535);
        assertThat(cut.lines().get(1).text()).isEqualTo("€€");
        assertThat(cut.lines().get(1).offset()).isEqualTo(100 + 65535);
    }

    @Test
    void theStartOfACharacterAtTheEndWaitsForItsRest() {
        byte[] euro = utf8("€");
        byte[] partial = {'h', 'i', euro[0], euro[1]};
        LineCutter.Cut cut = cut(partial, true, false);
        assertThat(cut.lines()).singleElement().satisfies(l -> assertThat(l.text()).isEqualTo("hi"));
        assertThat(cut.consumed()).isEqualTo(2);
        // when nothing more can come, its bytes are what they are
        assertThat(cut(partial, true, true).lines().get(0).text()).isEqualTo("hi\\xe2\\x82");
    }

    @Test
    void escapedTextNeverPassesTheLimitOfALine() {
        byte[] control = new byte[64 * 1024];
        Arrays.fill(control, (byte) 1);
        byte[] line = Arrays.copyOf(control, control.length + 1);
        line[control.length] = '\n';
        List<JobLogChunk.Line> lines = cut(line, false, false).lines();
        assertThat(lines).hasSize(4).allMatch(l -> l.text().length() <= JobLogChunk.MAX_LINE_CHARS);
        assertThat(lines.stream().mapToInt(l -> l.text().length()).sum()).isEqualTo(4 * 64 * 1024);
    }
}
