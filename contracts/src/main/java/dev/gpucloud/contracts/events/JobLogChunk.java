package dev.gpucloud.contracts.events;

import java.time.Instant;
import java.util.List;

/**
 * Consecutive lines of what one worker wrote to one of its streams, on {@code job.logs} keyed by jobId, as its agent
 * read them from the worker's log file on the host. Delivery is at least once: an agent that lost an acknowledgement
 * sends a chunk again, and a reader keeps, per allocation and stream, only lines whose {@link Line#offset()} lies past
 * the last one it showed. {@code end} says the worker exited and the stream holds nothing more (its lines may be
 * empty then).
 */
public record JobLogChunk(
        String jobId,
        String allocationId,
        String tenant,
        String nodeId,
        int rank,
        Stream stream,
        List<Line> lines,
        boolean end) {

    /** The most text one line carries: a longer line is split, each piece but the last {@code continued}. */
    public static final int MAX_LINE_CHARS = 64 * 1024;

    /** Which of the worker's outputs. */
    public enum Stream {
        STDOUT, STDERR
    }

    /**
     * One line without its newline. {@code text} is UTF-8, with bytes that are not and control characters other than
     * tab written as {@code \xNN} and a backslash as two. A line that stands for output the agent did not send (the
     * worker wrote faster than its limit) says so in {@code text} and counts it in {@code droppedLines} and
     * {@code droppedBytes}.
     */
    public record Line(Instant at, long offset, String text, boolean continued, long droppedLines, long droppedBytes) {

        public Line {
            Require.present(at, "at");
            Require.atLeast(offset, 0, "offset");
            Require.present(text, "text");
            if (text.length() > MAX_LINE_CHARS) {
                throw new IllegalArgumentException("field 'text' must be at most " + MAX_LINE_CHARS
                        + " characters, was " + text.length());
            }
            Require.atLeast(droppedLines, 0, "droppedLines");
            Require.atLeast(droppedBytes, 0, "droppedBytes");
        }

        /** A line of text as the worker wrote it. */
        public static Line of(Instant at, long offset, String text, boolean continued) {
            return new Line(at, offset, text, continued, 0, 0);
        }
    }

    public JobLogChunk {
        Require.text(jobId, "jobId");
        Require.text(allocationId, "allocationId");
        Require.text(tenant, "tenant");
        Require.text(nodeId, "nodeId");
        Require.atLeast(rank, 0, "rank");
        Require.present(stream, "stream");
        lines = Require.list(lines, "lines");
        if (lines.isEmpty() && !end) {
            throw new IllegalArgumentException("field 'lines' must not be empty unless 'end' is true");
        }
    }
}
