package dev.gpucloud.agent.logs;

import dev.gpucloud.contracts.events.JobLogChunk;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts what a worker wrote into lines as {@code job.logs} carries them. A line ends at a newline (a carriage return
 * just before it is dropped); a line longer than {@link #MAX_LINE_BYTES} bytes, or whose text would be longer than
 * {@link JobLogChunk#MAX_LINE_CHARS} characters, goes out in pieces, each but the last {@code continued}. The text is
 * the bytes as UTF-8, where a byte that is not part of a valid UTF-8 sequence, and a control character other than tab,
 * is written {@code \xNN}, and a backslash {@code \\}: binary output reads back unambiguously and never breaks a
 * terminal. A piece is never cut inside a UTF-8 sequence.
 */
final class LineCutter {

    /** The most bytes of output one line carries; a longer one is split. */
    static final int MAX_LINE_BYTES = 64 * 1024;

    private LineCutter() {
    }

    /** Lines cut from {@code bytes[0, length)}, read at file offset {@code base}; and how many bytes they took. */
    record Cut(List<JobLogChunk.Line> lines, int consumed) {
    }

    /**
     * Cuts the complete lines of {@code bytes[0, length)}. The bytes after the last newline are a line still being
     * written: they are left for later ({@code consumed} stops before them) unless they fill a whole piece, or
     * {@code flushTail} says to take them now (the worker exited, or has left them unfinished for a while), when they
     * go out as a piece marked continued, or not when {@code last} says nothing more can follow.
     */
    static Cut cut(byte[] bytes, int length, long base, Instant at, boolean flushTail, boolean last) {
        List<JobLogChunk.Line> lines = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        int pos = 0;
        while (pos < length) {
            int newline = indexOf(bytes, (byte) '\n', pos, length);
            int end = newline >= 0 ? newline : length;
            int content = end > pos && bytes[end - 1] == '\r' && newline >= 0 ? end - 1 : end;
            if (newline < 0 && length - pos < MAX_LINE_BYTES && !flushTail) {
                break; // an unfinished line, shorter than a piece: wait for its end
            }
            // one piece of the line [pos, content)
            text.setLength(0);
            int to = Math.min(content, pos + MAX_LINE_BYTES);
            // a character that the piece's end cuts is left for the next piece, or for when the worker writes its rest
            int taken = escape(bytes, pos, to, to < content || (newline < 0 && !last), text);
            int pieceEnd = pos + taken;
            boolean whole = pieceEnd == content;
            if (whole && newline >= 0) {
                lines.add(JobLogChunk.Line.of(at, base + pos, text.toString(), false));
                pos = newline + 1;
            } else if (whole) { // the unfinished tail, taken now
                lines.add(JobLogChunk.Line.of(at, base + pos, text.toString(), !last));
                pos = pieceEnd;
            } else {
                if (taken == 0) {
                    break; // only the start of a UTF-8 sequence is there yet
                }
                lines.add(JobLogChunk.Line.of(at, base + pos, text.toString(), true));
                pos = pieceEnd;
            }
        }
        return new Cut(lines, pos);
    }

    /**
     * Appends the text of {@code bytes[from, to)} to {@code out}, stopping before the text would pass
     * {@link JobLogChunk#MAX_LINE_CHARS}, and before a UTF-8 sequence that {@code to} cuts when {@code more} says its
     * rest may still come (else its bytes are escaped). Returns how many bytes it took.
     */
    static int escape(byte[] bytes, int from, int to, boolean more, StringBuilder out) {
        int limit = JobLogChunk.MAX_LINE_CHARS;
        int i = from;
        while (i < to) {
            int b = bytes[i] & 0xFF;
            if (b < 0x80) {
                if (b == '\\') {
                    if (out.length() + 2 > limit) {
                        break;
                    }
                    out.append("\\\\");
                } else if ((b < 0x20 && b != '\t') || b == 0x7F) {
                    if (out.length() + 4 > limit) {
                        break;
                    }
                    hex(b, out);
                } else {
                    if (out.length() + 1 > limit) {
                        break;
                    }
                    out.append((char) b);
                }
                i++;
                continue;
            }
            int need = sequenceLength(b);
            if (need > 0 && i + need > to && more && valid(bytes, i, to, b)) {
                break; // the rest of this character is not written yet
            }
            if (need > 0 && i + need <= to && valid(bytes, i, i + need, b)) {
                int cp = decode(bytes, i, need);
                int chars = Character.charCount(cp);
                if (out.length() + chars > limit) {
                    break;
                }
                out.appendCodePoint(cp);
                i += need;
                continue;
            }
            if (out.length() + 4 > limit) {
                break;
            }
            hex(b, out); // not UTF-8: the byte as it is
            i++;
        }
        return i - from;
    }

    private static void hex(int b, StringBuilder out) {
        out.append("\\x").append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xF, 16));
    }

    /** How many bytes the UTF-8 sequence led by {@code lead} has; 0 for a byte that leads none. */
    private static int sequenceLength(int lead) {
        if (lead >= 0xC2 && lead <= 0xDF) {
            return 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            return 3;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            return 4;
        }
        return 0;
    }

    /** Whether {@code bytes[from, to)} is a valid start (or whole) of the sequence {@code lead} leads. */
    private static boolean valid(byte[] bytes, int from, int to, int lead) {
        for (int k = from + 1; k < to; k++) {
            int c = bytes[k] & 0xFF;
            if ((c & 0xC0) != 0x80) {
                return false;
            }
            if (k == from + 1) { // the second byte's range rules out overlong forms, surrogates and code points past U+10FFFF
                if ((lead == 0xE0 && c < 0xA0) || (lead == 0xED && c > 0x9F) || (lead == 0xF0 && c < 0x90)
                        || (lead == 0xF4 && c > 0x8F)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static int decode(byte[] bytes, int at, int length) {
        int cp = bytes[at] & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
        for (int k = 1; k < length; k++) {
            cp = (cp << 6) | (bytes[at + k] & 0x3F);
        }
        return cp;
    }

    static int indexOf(byte[] bytes, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
