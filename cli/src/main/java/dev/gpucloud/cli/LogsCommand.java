package dev.gpucloud.cli;

import com.google.protobuf.Timestamp;
import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.client.SchedulerUnavailableException;
import dev.gpucloud.contracts.grpc.v1.GetJobRequest;
import dev.gpucloud.contracts.grpc.v1.Job;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.LogChunk;
import dev.gpucloud.contracts.grpc.v1.LogLine;
import dev.gpucloud.contracts.grpc.v1.LogStream;
import dev.gpucloud.contracts.grpc.v1.StreamLogsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gpucloud logs JOB}: what a job's workers wrote to stdout and stderr, through {@code JobService.StreamLogs}.
 * A broken stream is opened again (at another scheduler instance where there are several) from the oldest line
 * it may have missed, and the lines already printed are passed over by their byte offset, so no line prints twice.
 */
@Command(name = "logs", description = {"Print what a job's workers wrote to stdout and stderr, oldest first;",
        "with -f, go on printing until the job has ended and every worker's output is in.",
        "With several workers each line starts with [rank N stdout|stderr]."})
final class LogsCommand extends GpucloudCli.Base {

    @Parameters(index = "0", paramLabel = "JOB", description = "The job's id (job-...).")
    String jobId;
    @Option(names = {"-f", "--follow"}, description = "Keep printing new output until the job ends.")
    boolean follow;
    @Option(names = "--rank", paramLabel = "N", description = "Only worker N's output (0-based).")
    Integer rank;
    @Option(names = "--since", paramLabel = "DURATION|TIME", description = "Only lines read in the last DURATION"
            + " (90s, 15m, 2h, 7d) or at or after TIME (ISO 8601 with its offset: 2026-12-07T10:00:00Z).")
    String since;
    @Option(names = "--stream", paramLabel = "STREAM", converter = OfStream.class, description = "stdout or stderr"
            + " only (default: both).")
    LogStream stream;
    @Option(names = "--timestamps", description = "Start each line with when the agent read it.")
    boolean timestamps;
    /** text (the lines), or json: one LogChunk a line in protobuf's JSON mapping, holding the lines not sent before. */
    @CommandLine.Mixin
    Output output;

    /** stdout or stderr. */
    static final class OfStream extends Choice<LogStream> {
        OfStream() {
            super(LogStream.class, "LOG_");
        }
    }

    /** What went wrong, in words that say what to do; one line, exit 1. */
    static final class Problem extends RuntimeException {
        Problem(String message) {
            super(message, null, false, false);
        }
    }

    /** One worker's stream in one run of it: the unit that byte offsets and continued lines belong to. */
    private record Key(String allocationId, int rank, LogStream stream) {
    }

    /** Where the printing of one stream stands: the last line printed, and a line still being continued. */
    private static final class Seen {
        long offset = -1;
        Timestamp at;
        StringBuilder partial;
        String partialPrefix;
        /** After a re-open: lines at or below this offset were printed before and are passed over. */
        long resumeAfter = -1;
    }

    private final Map<Key, Seen> seen = new LinkedHashMap<>();
    private boolean prefixed;
    private Integer firstRank;

    @Override
    Integer run(LeaderFailover scheduler) {
        Output.Format format = output.format(Output.Format.TEXT, Output.Format.JSON);
        if (rank != null && rank < 0) {
            throw bad("--rank must be a worker's rank, 0 or more, was " + rank);
        }
        Timestamp from = since == null ? null : since(since);
        Job job = ask(() -> scheduler.call(ch -> JobServiceGrpc.newBlockingStub(ch)
                .getJob(GetJobRequest.newBuilder().setJobId(jobId).build())));
        int workers = Math.max(1, job.getSpec().getWorkers());
        if (rank != null && rank >= workers) {
            throw bad("--rank " + rank + ": job " + jobId + " has " + workers + " worker(s), ranks 0.." + (workers - 1));
        }
        prefixed = rank == null && workers > 1;
        PrintWriter out = out();
        PrintWriter err = spec.commandLine().getErr();
        LeaderFailover.Attempts attempts = scheduler.attempts();
        boolean reopened = false;
        long downSince = 0;
        int waits = 0;
        while (true) {
            StreamLogsRequest.Builder request = StreamLogsRequest.newBuilder().setJobId(jobId).setFollow(follow);
            if (rank != null) {
                request.setRank(rank);
            }
            if (stream != null) {
                request.setStream(stream);
            }
            Timestamp resumeFrom = reopened ? resumeFrom(from) : from;
            if (resumeFrom != null) {
                request.setSince(resumeFrom);
            }
            try {
                Iterator<LogChunk> chunks = JobServiceGrpc.newBlockingStub(attempts.channel()).streamLogs(request.build());
                while (ask(chunks::hasNext)) {
                    LogChunk chunk = chunks.next();
                    attempts.progressed();
                    downSince = 0;
                    waits = 0;
                    print(chunk, format, out, err);
                }
                flushPartials(out);
                return 0;
            } catch (StatusRuntimeException broken) {
                try {
                    // a server that stops cancels its streams (RST_STREAM): a break like any other, since this
                    // command never cancels its own
                    attempts.failed(broken.getStatus().getCode() != Status.Code.CANCELLED ? broken
                            : Status.UNAVAILABLE.withDescription("the stream was closed ("
                                    + GpucloudCli.firstLine(String.valueOf(broken.getStatus().getDescription())) + ")")
                                    .asRuntimeException());
                } catch (SchedulerUnavailableException down) {
                    // with -f, a scheduler that restarts (every address refusing for a moment) is waited for, as
                    // long as a failover may take; without -f, or past that, it is the error
                    if (!follow || !down.noneReachable() || downSince != 0
                            && System.nanoTime() - downSince > (long) (parent.failoverTimeout * 1e9)) {
                        throw down;
                    }
                    if (downSince == 0) {
                        downSince = System.nanoTime();
                        err.println("note: the scheduler at " + down.lastAddress() + " went away; waiting up to "
                                + RpcDeadline.words(java.time.Duration.ofMillis((long) (parent.failoverTimeout * 1000)))
                                + " for it (--failover-timeout)");
                        err.flush();
                    }
                    pause(LeaderFailover.backoff(waits++));
                    attempts = scheduler.attempts();
                }
                // the stream broke: open it again, passing over what was printed
                seen.values().forEach(s -> s.resumeAfter = s.offset);
                reopened = true;
            }
        }
    }

    private static void pause(java.time.Duration wait) {
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
    }

    /** The oldest moment a re-opened stream must start from: the earliest last line of any stream, or the start. */
    private Timestamp resumeFrom(Timestamp from) {
        Timestamp earliest = null;
        for (Seen s : seen.values()) {
            if (s.at != null && (earliest == null || compare(s.at, earliest) < 0)) {
                earliest = s.at;
            }
        }
        if (earliest == null) {
            return from;
        }
        return from != null && compare(from, earliest) > 0 ? from : earliest;
    }

    private static int compare(Timestamp a, Timestamp b) {
        return a.getSeconds() != b.getSeconds() ? Long.compare(a.getSeconds(), b.getSeconds())
                : Integer.compare(a.getNanos(), b.getNanos());
    }

    private void print(LogChunk chunk, Output.Format format, PrintWriter out, PrintWriter err) {
        Key key = new Key(chunk.getAllocationId(), chunk.getRank(), chunk.getStream());
        Seen s = seen.computeIfAbsent(key, k -> new Seen());
        LogChunk.Builder fresh = chunk.toBuilder().clearLines();
        for (LogLine line : chunk.getLinesList()) {
            if (s.resumeAfter >= 0 && line.getOffset() <= s.resumeAfter) {
                continue; // printed before the stream broke
            }
            s.resumeAfter = -1;
            s.offset = line.getOffset();
            s.at = line.getAt();
            fresh.addLines(line);
        }
        if (format == Output.Format.JSON) {
            if (fresh.getLinesCount() > 0 || chunk.getEnd()) {
                out.println(Output.jsonLine(fresh));
                out.flush();
            }
            return;
        }
        if (firstRank == null) {
            firstRank = chunk.getRank();
        } else if (firstRank != chunk.getRank()) {
            prefixed = true; // the job has more workers than its spec said: tell their lines apart from here on
        }
        String prefix = prefixed
                ? "[rank " + chunk.getRank() + " " + Choice.word(chunk.getStream().name().replace("LOG_", "")) + "] "
                : "";
        for (LogLine line : fresh.getLinesList()) {
            if (line.getDroppedLines() > 0 || line.getDroppedBytes() > 0) {
                out.flush();
                err.println("note: " + (prefix.isEmpty() ? "" : prefix) + line.getDroppedLines() + " line(s), "
                        + line.getDroppedBytes() + " byte(s) dropped here: the worker wrote faster than the agent"
                        + " sends; they are still in its log file on " + (chunk.getNodeId().isEmpty() ? "its host"
                        : chunk.getNodeId()));
                err.flush();
                if (line.getText().isEmpty()) {
                    continue;
                }
            }
            String stamp = timestamps ? JobView.time(line.getAt()) + " " : "";
            if (line.getContinued()) {
                if (s.partial == null) {
                    s.partial = new StringBuilder();
                    s.partialPrefix = prefix + stamp;
                }
                s.partial.append(line.getText());
                continue;
            }
            if (s.partial != null) {
                out.println(s.partialPrefix + s.partial + line.getText());
                s.partial = null;
            } else {
                out.println(prefix + stamp + line.getText());
            }
        }
        if (chunk.getEnd() && s.partial != null) {
            out.println(s.partialPrefix + s.partial);
            s.partial = null;
        }
        out.flush();
    }

    /** A line still continued when the stream ends is printed as far as it got. */
    private void flushPartials(PrintWriter out) {
        for (Seen s : seen.values()) {
            if (s.partial != null) {
                out.println(s.partialPrefix + s.partial);
                s.partial = null;
            }
        }
        out.flush();
    }

    /** --since as a moment: now less a duration, or a time with its offset. */
    Timestamp since(String text) {
        Instant at;
        try {
            at = OffsetDateTime.parse(text.strip()).toInstant();
        } catch (DateTimeException notATime) {
            try {
                at = Instant.now().minus(AuditTrailCommand.durationOf(text));
            } catch (IllegalArgumentException notADuration) {
                throw bad("--since must be a duration such as 90s, 15m, 2h or 7d, or a time with its offset such as"
                        + " 2026-12-07T10:00:00Z, was '" + GpucloudCli.clip(text, 64) + "'");
            }
        }
        return Timestamp.newBuilder().setSeconds(at.getEpochSecond()).setNanos(at.getNano()).build();
    }

    /** A call whose refusal is said in the words of this command: which job, and what to do. */
    private <T> T ask(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            String said = GpucloudCli.firstLine(String.valueOf(status.getDescription()));
            switch (status.getCode()) {
                case NOT_FOUND -> throw new Problem("no job " + jobId + " that you may see (" + said + "); gpucloud"
                        + " jobs lists yours");
                case FAILED_PRECONDITION -> throw new Problem("job " + jobId + " has no output yet: it has not run ("
                        + said + "); gpucloud get " + jobId + " says why it waits, and gpucloud logs -f " + jobId
                        + " waits for its first line");
                default -> throw e;
            }
        }
    }

    private CommandLine.ParameterException bad(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
