package dev.gpucloud.agent.logs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.events.JobLogChunk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogShipperTest {

    @TempDir
    Path runs;

    /** What a broker took, and whether it answers: failing drops the chunk, losing the answer keeps it. */
    static final class Broker implements LogShipper.Sink {
        final List<JobLogChunk> taken = new CopyOnWriteArrayList<>();
        final AtomicInteger refuse = new AtomicInteger();
        final AtomicInteger loseAnswers = new AtomicInteger();

        @Override
        public CompletableFuture<Void> send(JobLogChunk chunk) {
            if (refuse.get() > 0) {
                refuse.decrementAndGet();
                return CompletableFuture.failedFuture(new IOException("broker down"));
            }
            taken.add(chunk);
            if (loseAnswers.get() > 0) {
                loseAnswers.decrementAndGet();
                return CompletableFuture.failedFuture(new IOException("timed out waiting for the answer"));
            }
            return CompletableFuture.completedFuture(null);
        }

        /** Each stream's lines as a reader shows them: each offset once, in order. */
        Map<String, List<String>> shown() {
            Map<String, List<String>> out = new HashMap<>();
            Map<String, Long> last = new HashMap<>();
            for (JobLogChunk c : taken) {
                String key = c.allocationId() + "/" + c.stream();
                for (JobLogChunk.Line l : c.lines()) {
                    if (l.offset() <= last.getOrDefault(key, -1L)) {
                        continue;
                    }
                    last.put(key, l.offset());
                    out.computeIfAbsent(key, k -> new ArrayList<>()).add(l.text());
                }
            }
            return out;
        }

        long ends(String allocation) {
            return taken.stream().filter(c -> c.allocationId().equals(allocation) && c.end()).count();
        }
    }

    final Broker broker = new Broker();
    final List<String> said = new CopyOnWriteArrayList<>();

    LogShipper shipper(LogShipper.Settings settings) {
        return new LogShipper(broker, settings, Clock.systemUTC(), said::add);
    }

    LogShipper shipper() {
        return shipper(new LogShipper.Settings(Duration.ofMillis(10), 1024 * 1024, 16L * 1024 * 1024,
                Duration.ofSeconds(60), Duration.ofSeconds(5)));
    }

    OutputSource source(String allocation) throws IOException {
        Path dir = Files.createDirectories(runs.resolve(allocation));
        return new OutputSource(allocation, "job-1", "acme", "sim-a100-0", 0, dir.resolve("output.log"),
                dir.resolve("stderr.log"));
    }

    static void write(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void everyLineOfBothStreamsGoesOnceInOrderAndEachStreamEndsAfterTheExit() throws Exception {
        LogShipper shipper = shipper();
        OutputSource a = source("a1");
        shipper.started(a);
        write(a.stdout(), "step 1\nstep 2\n");
        write(a.stderr(), "warning: slow\n");
        shipper.round();
        write(a.stdout(), "step 3\nno newline at the end");
        shipper.exited("a1");
        shipper.round();
        shipper.round();
        assertThat(broker.shown()).containsEntry("a1/STDOUT", List.of("step 1", "step 2", "step 3",
                "no newline at the end"));
        assertThat(broker.shown()).containsEntry("a1/STDERR", List.of("warning: slow"));
        assertThat(broker.ends("a1")).isEqualTo(2);
        assertThat(shipper.watched()).isZero();
        assertThat(Files.readString(a.stdout().resolveSibling(LogShipper.STATE_FILE))).contains("\"done\":true");
        shipper.round();
        assertThat(broker.ends("a1")).isEqualTo(2); // ended once
    }

    @Test
    void aBrokerOutageLosesNoLineAndALostAnswerSendsTheSameOffsetsAgain() throws Exception {
        LogShipper shipper = shipper();
        OutputSource a = source("a2");
        shipper.started(a);
        List<String> expected = new ArrayList<>();
        broker.refuse.set(5);
        for (int i = 0; i < 5; i++) {
            write(a.stdout(), "line " + i + "\n");
            expected.add("line " + i);
            assertThat(shipper.round()).isPositive();
        }
        assertThat(broker.taken).isEmpty();
        assertThat(said).anyMatch(s -> s.contains("did not take"));
        broker.loseAnswers.set(1);
        assertThat(shipper.round()).isEqualTo(1); // taken, but the answer never came: it goes again
        shipper.round();
        assertThat(broker.taken).hasSize(2);
        assertThat(broker.taken.get(1).lines()).isEqualTo(broker.taken.get(0).lines());
        assertThat(broker.shown().get("a2/STDOUT")).isEqualTo(expected);
        assertThat(said).anyMatch(s -> s.contains("takes log chunks again"));
    }

    @Test
    void aRestartedAgentShipsTheRestOfWhatTheLastOneLeftAndEndsIt() throws Exception {
        LogShipper first = shipper();
        OutputSource a = source("a3");
        first.started(a);
        write(a.stdout(), "before\n");
        first.round();
        first.close(); // the agent stops; its worker wrote on
        write(a.stdout(), "after\n");
        write(a.stderr(), "err after\n");

        LogShipper second = shipper();
        assertThat(second.recover(runs)).isEqualTo(1);
        second.round();
        second.round();
        assertThat(broker.shown().get("a3/STDOUT")).containsExactly("before", "after");
        assertThat(broker.shown().get("a3/STDERR")).containsExactly("err after");
        assertThat(broker.ends("a3")).isEqualTo(2);
        assertThat(shipper().recover(runs)).isZero(); // done: a third start has nothing to take up
    }

    @Test
    void aRunawayWriterHasItsBacklogSkippedToAWholeLineAndToldHowMuch() throws Exception {
        LogShipper shipper = shipper(new LogShipper.Settings(Duration.ofMillis(10), LogShipper.CHUNK_BYTES,
                2L * LogShipper.CHUNK_BYTES, Duration.ofSeconds(60), Duration.ofSeconds(5)));
        OutputSource a = source("a4");
        shipper.started(a);
        StringBuilder flood = new StringBuilder();
        int lines = 40_000; // about 1 MiB, far past a backlog of 256 KiB
        for (int i = 0; i < lines; i++) {
            flood.append(String.format("%026d\n", i));
        }
        write(a.stdout(), flood.toString());
        shipper.round();
        write(a.stdout(), "after the flood\n");
        shipper.exited("a4");
        for (int i = 0; i < 20 && broker.ends("a4") < 2; i++) {
            shipper.round();
        }
        List<JobLogChunk.Line> all = broker.taken.stream().flatMap(c -> c.lines().stream()).toList();
        JobLogChunk.Line marker = all.stream().filter(l -> l.droppedLines() > 0).findFirst().orElseThrow();
        assertThat(marker.text()).contains("40,000 line(s)").contains("of stdout not sent").contains(a.stdout()
                .toString()).contains("sim-a100-0");
        assertThat(marker.droppedBytes()).isEqualTo(lines * 27L);
        assertThat(all).extracting(JobLogChunk.Line::text).endsWith("after the flood");
        assertThat(shipper.droppedLines()).isEqualTo(lines);
    }

    @Test
    void anUnfinishedLineGoesAfterItsWaitAndItsRestFollows() throws Exception {
        LogShipper shipper = shipper(new LogShipper.Settings(Duration.ofMillis(10), 1024 * 1024, 16L * 1024 * 1024,
                Duration.ZERO, Duration.ofSeconds(5)));
        OutputSource a = source("a5");
        shipper.started(a);
        write(a.stdout(), "Epoch 1: 50%");
        shipper.round(); // seen waiting
        shipper.round(); // waited long enough
        write(a.stdout(), " 100%\n");
        shipper.round();
        List<JobLogChunk.Line> all = broker.taken.stream().flatMap(c -> c.lines().stream()).toList();
        assertThat(all).extracting(JobLogChunk.Line::text).containsExactly("Epoch 1: 50%", " 100%");
        assertThat(all).extracting(JobLogChunk.Line::continued).containsExactly(true, false);
    }

    @Test
    void badSettingsAreRefusedByName() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LogShipper.Settings(Duration.ZERO, 1 << 20,
                1 << 24, Duration.ZERO, Duration.ofSeconds(1))).hasMessageContaining("poll interval");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LogShipper.Settings(Duration.ofMillis(1), 10,
                1 << 24, Duration.ZERO, Duration.ofSeconds(1))).hasMessageContaining("log rate");
    }
}
