package dev.gpucloud.agent.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The spool's files and the sender's retry loop, with a sink the test switches on and off. */
class SpoolTest {

    @TempDir
    Path dir;

    static SpooledRecord record(int n) {
        return new SpooledRecord("usage.events", "alloc-" + (n % 3),
                Map.of("ce_id", ("id-" + n).getBytes(StandardCharsets.UTF_8)), ("{\"n\":" + n + "}").getBytes());
    }

    @Test
    void appendedRecordsSurviveAReopenUntilAcknowledged() {
        Spool spool = new Spool(dir, true);
        List<Spool.Entry> first = spool.append(List.of(record(1), record(2)));
        spool.append(List.of(record(3)));
        spool.ack(first.get(0));
        assertThat(spool.size()).isEqualTo(2);

        Spool reopened = new Spool(dir, true);
        assertThat(reopened.pending(10)).extracting(Spool.Entry::record)
                .as("a half-acknowledged batch comes back whole: a duplicate with the same ce_id, never a loss")
                .containsExactly(record(1), record(2), record(3));
        reopened.pending(10).forEach(reopened::ack);
        assertThat(reopened.size()).isZero();
        assertThat(new Spool(dir, true).size()).isZero();
    }

    @Test
    void aDamagedFileIsSetAsideAndSaidNotToCrashTheAgent() throws Exception {
        Spool spool = new Spool(dir, false);
        spool.append(List.of(record(1)));
        Path file;
        try (var files = Files.list(dir)) {
            file = files.filter(f -> f.toString().endsWith(Spool.SUFFIX)).findFirst().orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x55;
        Files.write(file, bytes);
        Files.writeString(dir.resolve("00000000000000000009.batch.tmp"), "half written");

        Spool reopened = new Spool(dir, false);
        assertThat(reopened.size()).isZero();
        assertThat(reopened.recoveryProblems()).singleElement().asString().contains("checksum mismatch");
        assertThat(dir.resolve(file.getFileName() + ".corrupt")).exists();
        assertThat(dir.resolve("00000000000000000009.batch.tmp")).doesNotExist();
        assertThat(reopened.append(List.of(record(2))).get(0).batch()).as("numbering goes on after the damaged one")
                .isEqualTo(1);
    }

    @Test
    void theSenderRetriesThroughAnOutageAndDropsOnlyWhatWasAcknowledged() throws Exception {
        AtomicBoolean up = new AtomicBoolean(true);
        List<SpooledRecord> delivered = new CopyOnWriteArrayList<>();
        SpoolSink sink = r -> {
            if (!up.get()) {
                return CompletableFuture.failedFuture(new IllegalStateException("broker down"));
            }
            delivered.add(r);
            return CompletableFuture.completedFuture(null);
        };
        List<String> log = new CopyOnWriteArrayList<>();
        List<SpooledRecord> produced = new ArrayList<>();
        try (SpoolSender sender = new SpoolSender(new Spool(dir, false), sink, 50, Duration.ofSeconds(5),
                Duration.ofMillis(200), log::add).start()) {
            for (int i = 0; i < 100; i++) {
                if (i == 30) {
                    up.set(false);
                }
                if (i == 70) {
                    up.set(true);
                }
                produced.add(record(i));
                sender.submit(List.of(record(i)));
                Thread.sleep(5);
            }
            assertThat(sender.awaitEmpty(Duration.ofSeconds(10))).isTrue();
            assertThat(sender.failedSends()).isPositive();
        }
        assertThat(delivered).containsExactlyElementsOf(produced);
        assertThat(log).anyMatch(l -> l.contains("broker down")).anyMatch(l -> l.contains("resumed"));
    }

    @Test
    void theTelemetryQueueShedsItsOldestAndCountsThem() {
        SheddingQueue<Integer> queue = new SheddingQueue<>(3);
        for (int i = 0; i < 5; i++) {
            queue.offer(i);
        }
        assertThat(queue.shed()).isEqualTo(2);
        assertThat(queue.poll(10)).containsExactly(2, 3, 4);
    }

    /**
     * Samples of 5 hosts, taken in the same order every second, through a queue of 4 while the broker is away:
     * without conflation the first host's samples were always the ones shed, so it was never heard.
     */
    @Test
    void theTelemetryQueueKeepsEachHostsLatestSampleInItsPlace() {
        SheddingQueue<String> queue = new SheddingQueue<>(6, s -> s.substring(0, s.indexOf('@')));
        for (int second = 0; second < 3; second++) {
            for (int host = 0; host < 5; host++) {
                queue.offer("h" + host + "@" + second);
            }
        }
        assertThat(queue.poll(10)).containsExactly("h0@2", "h1@2", "h2@2", "h3@2", "h4@2");
        assertThat(queue.shed()).as("the older samples replaced").isEqualTo(10);

        SheddingQueue<String> small = new SheddingQueue<>(4, s -> s.substring(0, s.indexOf('@')));
        for (int host = 0; host < 5; host++) {
            small.offer("h" + host + "@0");
        }
        assertThat(small.poll(10)).as("more hosts than room: the oldest goes").containsExactly("h1@0", "h2@0", "h3@0",
                "h4@0");
    }
}
