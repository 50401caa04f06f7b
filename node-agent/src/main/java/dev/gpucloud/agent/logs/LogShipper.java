package dev.gpucloud.agent.logs;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpucloud.contracts.events.JobLogChunk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Ships what workers write to stdout and stderr to {@code job.logs}, read from the files the runner sends their output
 * to. The files are the spool: a line is on disk the moment the worker writes it, and the shipper moves a stream's
 * offset past it only once the broker has acknowledged the chunk that carries it, so a broker outage (or an agent
 * restart: the offsets are kept next to the files, in {@value #STATE_FILE}) loses no line. A chunk whose
 * acknowledgement was lost goes again with the same offsets, and readers keep each offset once.
 *
 * <p>Each round (every {@code poll}) reads what every stream has gained, at most a chunk's worth, cuts it into lines
 * ({@link LineCutter}), sends the chunks together and waits for their answers. A worker's streams share a budget of
 * {@code bytesPerSecond}; what it cannot send waits in its file, and a worker whose unsent output grows past
 * {@code backlogLimit} (a runaway writer) has that backlog skipped, up to its last whole line, and replaced by one line
 * that says how many lines and bytes were not sent and where on the host they are. Once a worker has exited and its
 * streams are read to their ends, each stream's last chunk says {@code end}.
 */
public final class LogShipper implements OutputWatcher, AutoCloseable {

    /** The file next to a worker's output that remembers how far each stream was shipped. */
    public static final String STATE_FILE = ".gpucloud-logs.json";

    /** The most bytes of one stream one chunk carries (its JSON stays well under a record's 1 MiB, escaped or not). */
    static final int CHUNK_BYTES = 128 * 1024;
    /** The most lines one chunk carries. */
    static final int CHUNK_LINES = 1000;
    /** How far back from its end a skipped backlog is read to count its lines. */
    static final long COUNT_WINDOW = 64L * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** Where chunks go: completes when the broker has one. */
    @FunctionalInterface
    public interface Sink {
        CompletionStage<Void> send(JobLogChunk chunk);
    }

    /**
     * How the shipper paces itself: how often it looks for new output, the bytes per second one worker may send,
     * the unsent output past which a worker's backlog is skipped, and how long an unfinished last line waits for its
     * newline before it goes out as it is.
     */
    public record Settings(Duration poll, long bytesPerSecond, long backlogLimit, Duration tailWait,
            Duration sendTimeout) {

        public Settings {
            if (poll == null || poll.isNegative() || poll.isZero()) {
                throw new IllegalArgumentException("the log poll interval must be positive, was " + poll);
            }
            if (bytesPerSecond < CHUNK_BYTES) {
                throw new IllegalArgumentException("the log rate must be at least " + CHUNK_BYTES
                        + " bytes per second, was " + bytesPerSecond);
            }
            if (backlogLimit < 2L * CHUNK_BYTES) {
                throw new IllegalArgumentException("the log backlog limit must be at least " + 2 * CHUNK_BYTES
                        + " bytes, was " + backlogLimit);
            }
            if (tailWait == null || tailWait.isNegative()) {
                throw new IllegalArgumentException("the unfinished-line wait must not be negative, was " + tailWait);
            }
            if (sendTimeout == null || sendTimeout.isNegative() || sendTimeout.isZero()) {
                throw new IllegalArgumentException("the log send timeout must be positive, was " + sendTimeout);
            }
        }

        /** 100 ms polls, 1 MiB/s per worker, 16 MiB of backlog, 2 s for an unfinished line, 30 s per send. */
        public static Settings defaults() {
            return new Settings(Duration.ofMillis(100), 1024 * 1024, 16L * 1024 * 1024, Duration.ofSeconds(2),
                    Duration.ofSeconds(30));
        }
    }

    /** What {@value #STATE_FILE} holds. */
    record State(String allocationId, String jobId, String tenant, String nodeId, int rank, String stdout,
            String stderr, long stdoutShipped, boolean stdoutEnded, long stderrShipped, boolean stderrEnded,
            boolean exited, boolean done) {
    }

    private final Sink sink;
    private final Settings settings;
    private final Clock clock;
    private final Consumer<String> log;
    private final Map<String, Source> sources = new LinkedHashMap<>();
    private final AtomicLong linesSent = new AtomicLong();
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicLong droppedLines = new AtomicLong();
    private final AtomicLong droppedBytes = new AtomicLong();
    private final AtomicLong failedSends = new AtomicLong();
    private volatile boolean outage;
    private volatile boolean running;
    private Thread thread;

    public LogShipper(Sink sink, Settings settings, Clock clock, Consumer<String> log) {
        this.sink = sink;
        this.settings = settings;
        this.clock = clock;
        this.log = log;
    }

    @Override
    public synchronized void started(OutputSource source) {
        if (sources.containsKey(source.allocationId())) {
            return;
        }
        Source s = new Source(source, 0, false, 0, false, false, System.nanoTime());
        sources.put(source.allocationId(), s);
        persist(s);
    }

    @Override
    public synchronized void exited(String allocationId) {
        Source s = sources.get(allocationId);
        if (s != null) {
            s.exited = true;
            s.dirty = true;
        }
    }

    /**
     * Takes up the output an earlier run of the agent had not finished shipping, from the {@value #STATE_FILE}s under
     * {@code runDir}: those workers are not this run's, so each is shipped to the end of its files and ended.
     * Returns how many it took up.
     */
    public synchronized int recover(Path runDir) {
        int taken = 0;
        if (runDir == null || !Files.isDirectory(runDir)) {
            return 0;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(runDir)) {
            for (Path dir : dirs) {
                Path file = dir.resolve(STATE_FILE);
                if (!Files.isRegularFile(file)) {
                    continue;
                }
                try {
                    State st = JSON.readValue(file.toFile(), State.class);
                    if (st.done() || sources.containsKey(st.allocationId())) {
                        continue;
                    }
                    OutputSource source = new OutputSource(st.allocationId(), st.jobId(), st.tenant(), st.nodeId(),
                            st.rank(), Path.of(st.stdout()), Path.of(st.stderr()));
                    sources.put(st.allocationId(), new Source(source, st.stdoutShipped(), st.stdoutEnded(),
                            st.stderrShipped(), st.stderrEnded(), true, System.nanoTime()));
                    taken++;
                } catch (IOException | RuntimeException e) {
                    log.accept("cannot read " + file + " (" + e.getMessage() + "): that worker's output is not shipped");
                }
            }
        } catch (IOException e) {
            log.accept("cannot look for unshipped output in " + runDir + ": " + e.getMessage());
        }
        if (taken > 0) {
            log.accept("shipping the rest of the output of " + taken + " worker(s) of an earlier run");
        }
        return taken;
    }

    /** Starts shipping on a thread of its own, a round every poll interval. */
    public synchronized LogShipper start() {
        if (thread == null) {
            running = true;
            thread = new Thread(this::loop, "log-shipper");
            thread.setDaemon(true);
            thread.start();
        }
        return this;
    }

    private void loop() {
        long backoff = 0;
        while (running) {
            try {
                Thread.sleep(backoff > 0 ? backoff : settings.poll().toMillis());
                int failures = round();
                backoff = failures == 0 ? 0 : Math.min(backoff == 0 ? 200 : backoff * 2, 5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.accept("log shipper: " + e);
                backoff = 1000;
            }
        }
    }

    /**
     * One round: reads every stream's new output, sends it, waits for the broker's answers and moves each stream past
     * what was acknowledged. Returns how many sends failed (their output goes again in a later round).
     */
    public int round() throws InterruptedException {
        List<Pending> pending = new ArrayList<>();
        synchronized (this) {
            long nanos = System.nanoTime();
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            for (Source s : sources.values()) {
                s.refill(nanos, settings.bytesPerSecond());
                for (Tail tail : s.tails()) {
                    Pending p = next(s, tail, now, nanos);
                    if (p != null) {
                        pending.add(p);
                    }
                }
            }
        }
        List<CompletableFuture<Void>> sent = new ArrayList<>(pending.size());
        for (Pending p : pending) {
            CompletableFuture<Void> f;
            try {
                f = sink.send(p.chunk).toCompletableFuture();
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            sent.add(f);
        }
        int failures = 0;
        String firstError = null;
        long deadline = System.nanoTime() + settings.sendTimeout().toNanos();
        List<Pending> acked = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            try {
                sent.get(i).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                acked.add(pending.get(i));
            } catch (ExecutionException | TimeoutException e) {
                failures++;
                failedSends.incrementAndGet();
                if (firstError == null) {
                    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                    firstError = cause.getClass().getSimpleName() + ": " + cause.getMessage();
                }
            }
        }
        synchronized (this) {
            for (Pending p : acked) {
                p.tail.shipped = p.upTo;
                p.tail.ended |= p.chunk.end();
                p.source.dirty = true;
                linesSent.addAndGet(p.chunk.lines().size());
                bytesSent.addAndGet(p.bytes);
                if (p.droppedLines > 0 || p.droppedBytes > 0) {
                    droppedLines.addAndGet(p.droppedLines);
                    droppedBytes.addAndGet(p.droppedBytes);
                }
            }
            long nanos = System.nanoTime();
            List<String> finished = new ArrayList<>();
            for (Source s : sources.values()) {
                if (s.out.ended && s.err.ended) {
                    s.done = true;
                    finished.add(s.source.allocationId());
                    persist(s);
                } else if (s.dirty && nanos - s.persistedAt >= 1_000_000_000L) {
                    persist(s); // at most once a second: a crash sends again what the last second shipped
                }
            }
            finished.forEach(sources::remove);
        }
        if (failures > 0 && !outage) {
            outage = true;
            log.accept("the broker did not take " + failures + " of " + sent.size() + " log chunk(s) (" + firstError
                    + "); the output waits in the workers' files and goes again");
        } else if (failures == 0 && outage && !sent.isEmpty()) {
            outage = false;
            log.accept("the broker takes log chunks again");
        }
        return failures;
    }

    /** The next chunk of one stream, or null when it has nothing to send now. */
    private Pending next(Source s, Tail tail, Instant now, long nanos) {
        if (tail.ended) {
            return null;
        }
        long size;
        try {
            size = Files.size(tail.file);
        } catch (NoSuchFileException e) {
            size = 0;
        } catch (IOException e) {
            return null;
        }
        if (size < tail.shipped) { // truncated under us: go on from its new end
            tail.shipped = size;
        }
        long backlog = size - tail.shipped;
        if (backlog > settings.backlogLimit()) {
            return dropped(s, tail, size, now);
        }
        if (backlog == 0) {
            return s.exited ? new Pending(s, tail, chunk(s, tail, List.of(), true), tail.shipped, 0, 0, 0) : null;
        }
        int budget = (int) Math.min(Math.min(backlog, CHUNK_BYTES), (long) s.tokens);
        if (budget <= 0) {
            return null; // over its rate: the output waits in the file
        }
        byte[] bytes;
        try {
            bytes = read(tail.file, tail.shipped, budget);
        } catch (IOException e) {
            return null;
        }
        boolean toEnd = tail.shipped + bytes.length == size;
        boolean stale = tail.tailAt == tail.shipped && nanos - tail.tailSince >= settings.tailWait().toNanos();
        LineCutter.Cut cut = LineCutter.cut(bytes, bytes.length, tail.shipped, now, s.exited || stale,
                s.exited && toEnd);
        List<JobLogChunk.Line> lines = cut.lines();
        int consumed = cut.consumed();
        if (lines.size() > CHUNK_LINES) {
            consumed = (int) (lines.get(CHUNK_LINES).offset() - tail.shipped);
            lines = lines.subList(0, CHUNK_LINES);
        }
        if (lines.isEmpty()) {
            if (tail.tailAt != tail.shipped) { // an unfinished line: when it began to wait
                tail.tailAt = tail.shipped;
                tail.tailSince = nanos;
            }
            return null;
        }
        s.tokens -= consumed;
        boolean end = s.exited && toEnd && consumed == bytes.length;
        return new Pending(s, tail, chunk(s, tail, lines, end), tail.shipped + consumed, consumed, 0, 0);
    }

    /** A runaway writer's backlog, skipped up to its last whole line and said in one line. */
    private Pending dropped(Source s, Tail tail, long size, Instant now) {
        long from = Math.max(tail.shipped, size - COUNT_WINDOW);
        long lines = 0;
        long lastNewline = -1;
        try (FileChannel channel = FileChannel.open(tail.file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(256 * 1024);
            long at = from;
            while (at < size) {
                buffer.clear();
                buffer.limit((int) Math.min(buffer.capacity(), size - at));
                int n = channel.read(buffer, at);
                if (n <= 0) {
                    break;
                }
                byte[] a = buffer.array();
                for (int i = 0; i < n; i++) {
                    if (a[i] == '\n') {
                        lines++;
                        lastNewline = at + i;
                    }
                }
                at += n;
            }
        } catch (IOException e) {
            return null;
        }
        long upTo = lastNewline >= 0 ? lastNewline + 1 : size;
        long bytes = upTo - tail.shipped;
        boolean atLeast = from > tail.shipped;
        String what = tail.stream.name().toLowerCase(Locale.ROOT);
        String text = String.format(Locale.ROOT, "[gpucloud] %s%,d line(s) (%s) of %s not sent: the worker wrote more"
                + " than %s/s; all of it is in %s on %s", atLeast ? "at least " : "", lines, size(bytes), what,
                size(settings.bytesPerSecond()), tail.file, s.source.nodeId());
        JobLogChunk.Line marker = new JobLogChunk.Line(now, tail.shipped, text, lastNewline < 0, lines, bytes);
        s.tokens = 0;
        return new Pending(s, tail, chunk(s, tail, List.of(marker), false), upTo, 0, lines, bytes);
    }

    private static JobLogChunk chunk(Source s, Tail tail, List<JobLogChunk.Line> lines, boolean end) {
        OutputSource o = s.source;
        return new JobLogChunk(o.jobId(), o.allocationId(), o.tenant(), o.nodeId(), o.rank(), tail.stream, lines, end);
    }

    private static byte[] read(Path file, long from, int length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(length);
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, from + buffer.position());
                if (n <= 0) {
                    break;
                }
            }
            byte[] bytes = new byte[buffer.position()];
            System.arraycopy(buffer.array(), 0, bytes, 0, bytes.length);
            return bytes;
        }
    }

    public static String size(long bytes) {
        if (bytes >= 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
        } else if (bytes >= 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return bytes + " B";
    }

    private void persist(Source s) {
        OutputSource o = s.source;
        Path file = o.stdout().resolveSibling(STATE_FILE);
        State state = new State(o.allocationId(), o.jobId(), o.tenant(), o.nodeId(), o.rank(), o.stdout().toString(),
                o.stderr().toString(), s.out.shipped, s.out.ended, s.err.shipped, s.err.ended, s.exited, s.done);
        Path tmp = file.resolveSibling(STATE_FILE + ".tmp");
        try {
            Files.write(tmp, JSON.writeValueAsBytes(state));
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            s.dirty = false;
            s.persistedAt = System.nanoTime();
        } catch (IOException e) {
            log.accept("cannot write " + file + ": " + e.getMessage());
        }
    }

    /** Workers whose output is still being shipped. */
    public synchronized int watched() {
        return sources.size();
    }

    /** Bytes written by workers and not yet acknowledged by the broker. */
    public synchronized long backlogBytes() {
        long total = 0;
        for (Source s : sources.values()) {
            for (Tail t : s.tails()) {
                try {
                    total += Math.max(0, Files.size(t.file) - t.shipped);
                } catch (IOException e) {
                    // not there yet
                }
            }
        }
        return total;
    }

    public long linesSent() {
        return linesSent.get();
    }

    public long bytesSent() {
        return bytesSent.get();
    }

    public long droppedLines() {
        return droppedLines.get();
    }

    public long droppedBytes() {
        return droppedBytes.get();
    }

    public long failedSends() {
        return failedSends.get();
    }

    /** Stops shipping; offsets are kept, so the next start goes on where this one stopped. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
            thread = null;
            sources.values().stream().filter(s -> s.dirty).forEach(this::persist);
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private record Pending(Source source, Tail tail, JobLogChunk chunk, long upTo, long bytes, long droppedLines,
            long droppedBytes) {
    }

    private static final class Tail {
        final JobLogChunk.Stream stream;
        final Path file;
        long shipped;
        boolean ended;
        /** Where an unfinished last line begins, and since when it has waited there for its newline. */
        long tailAt = -1;
        long tailSince;

        Tail(JobLogChunk.Stream stream, Path file, long shipped, boolean ended) {
            this.stream = stream;
            this.file = file;
            this.shipped = shipped;
            this.ended = ended;
        }
    }

    private static final class Source {
        final OutputSource source;
        final Tail out;
        final Tail err;
        boolean exited;
        boolean done;
        boolean dirty;
        long persistedAt;
        double tokens;
        long refilledAt;

        Source(OutputSource source, long outShipped, boolean outEnded, long errShipped, boolean errEnded,
                boolean exited, long nanos) {
            this.source = source;
            this.out = new Tail(JobLogChunk.Stream.STDOUT, source.stdout(), outShipped, outEnded);
            this.err = new Tail(JobLogChunk.Stream.STDERR, source.stderr(), errShipped, errEnded);
            this.exited = exited;
            this.refilledAt = nanos;
            this.tokens = 2.0 * CHUNK_BYTES; // a worker's first lines go at once
        }

        List<Tail> tails() {
            return List.of(out, err);
        }

        /** Adds what the rate gives since the last refill, up to a second's worth. */
        void refill(long nanos, long bytesPerSecond) {
            tokens = Math.min(Math.max(bytesPerSecond, 2.0 * CHUNK_BYTES),
                    tokens + bytesPerSecond * ((nanos - refilledAt) / 1e9));
            refilledAt = nanos;
        }
    }
}
