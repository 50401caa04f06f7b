package dev.gpucloud.agent.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Telemetry leaves at the broker's pace, at most so many in flight, and every host's latest sample gets out. */
class LatestSenderTest {

    /** A broker that acknowledges only when the test says so. */
    private static final class Broker {
        final List<String> sent = new ArrayList<>();
        final List<CompletableFuture<Void>> waiting = new ArrayList<>();

        CompletionStage<Void> send(String item) {
            sent.add(item);
            CompletableFuture<Void> f = new CompletableFuture<>();
            waiting.add(f);
            return f;
        }

        /** Acknowledges every send awaiting the broker now (the ones they cause wait for the next call). */
        int acknowledgeAll() {
            List<CompletableFuture<Void>> now = List.copyOf(waiting);
            waiting.clear();
            now.forEach(f -> f.complete(null));
            return now.size();
        }
    }

    private static String host(String sample) {
        return sample.substring(0, sample.indexOf('@'));
    }

    @Test
    void aBurstLargerThanWhatMayBeInFlightDrainsAsTheBrokerAcknowledges() {
        Broker broker = new Broker();
        List<Throwable> failures = new ArrayList<>();
        LatestSender<String> sender = new LatestSender<>(new SheddingQueue<>(20_000, LatestSenderTest::host), 8,
                broker::send, failures::add);
        for (int h = 0; h < 10_000; h++) {
            sender.offer("host-" + h + "@1");
        }
        assertThat(broker.sent).hasSize(8);
        assertThat(sender.sending()).isEqualTo(8);

        int rounds = 0;
        while (broker.acknowledgeAll() > 0) {
            rounds++;
        }
        // every host's sample left once, in order, with no new offer to push them
        assertThat(broker.sent).hasSize(10_000).doesNotHaveDuplicates();
        assertThat(broker.sent.get(9_999)).isEqualTo("host-9999@1");
        assertThat(rounds).isEqualTo(10_000 / 8);
        assertThat(sender.sending()).isZero();
        assertThat(failures).isEmpty();
    }

    @Test
    void aSampleWaitingIsReplacedByTheHostsNewerOne() {
        Broker broker = new Broker();
        LatestSender<String> sender = new LatestSender<>(new SheddingQueue<>(100, LatestSenderTest::host), 1,
                broker::send, f -> { });
        sender.offer("a@1");
        sender.offer("b@1");
        sender.offer("b@2");
        while (broker.acknowledgeAll() > 0) {
            // drain
        }
        assertThat(broker.sent).containsExactly("a@1", "b@2");
    }

    @Test
    void aFailedSendLeavesTheRestForTheNextOffer() {
        Map<String, Boolean> brokerUp = new java.util.HashMap<>(Map.of("up", false));
        List<String> sent = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        LatestSender<String> sender = new LatestSender<>(new SheddingQueue<>(100, LatestSenderTest::host), 4, s -> {
            sent.add(s);
            return brokerUp.get("up") ? CompletableFuture.completedFuture(null)
                    : CompletableFuture.failedFuture(new IllegalStateException("broker away"));
        }, failures::add);
        sender.offer("a@1");
        sender.offer("b@1");
        assertThat(failures).hasSize(2).allSatisfy(f -> assertThat(f).hasMessage("broker away"));
        assertThat(sender.sending()).isZero();

        brokerUp.put("up", true);
        sender.offer("c@1");
        sender.offer("d@1");
        // answered at once: the loop goes on without recursing, and nothing is left behind
        assertThat(sent).containsExactly("a@1", "b@1", "c@1", "d@1");
        assertThat(sender.sending()).isZero();
    }

    @Test
    void refusesNothingInFlight() {
        assertThatThrownBy(() -> new LatestSender<String>(new SheddingQueue<>(1), 0, s -> null, f -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inFlight");
    }
}
