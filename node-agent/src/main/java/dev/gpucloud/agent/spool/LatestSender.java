package dev.gpucloud.agent.spool;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Sends what may be lost (telemetry) through a {@link SheddingQueue}, with at most {@code inFlight} sends
 * awaiting the broker at once. Each acknowledged send takes the next item from the queue, so the queue drains
 * at the broker's pace between offers, not only while new items are offered.
 *
 * <p>Before, a queued sample left only when another was offered: an agent of 10,000 simulated hosts offered
 * its 10,000 samples in one burst, sent the first few hundred, and the rest waited for the next interval,
 * when they were replaced and again mostly left waiting. The scheduler counted four hosts in ten silent
 * past its timeout (the 10,000-host load run of 2026-12-03). A send that fails does not take the next item:
 * the broker is away, and the next offer tries again. Thread-safe.
 */
public final class LatestSender<T> {

    private final SheddingQueue<T> queue;
    private final int inFlight;
    private final Function<T, CompletionStage<?>> send;
    private final Consumer<Throwable> onFailure;
    private final AtomicInteger sending = new AtomicInteger();

    public LatestSender(SheddingQueue<T> queue, int inFlight, Function<T, CompletionStage<?>> send,
            Consumer<Throwable> onFailure) {
        if (inFlight < 1) {
            throw new IllegalArgumentException("inFlight must be at least 1, was " + inFlight);
        }
        this.queue = queue;
        this.inFlight = inFlight;
        this.send = send;
        this.onFailure = onFailure;
    }

    /** Queues {@code item} (replacing a waiting one of its key) and sends while there is room in flight. */
    public void offer(T item) {
        queue.offer(item);
        drain();
    }

    /** How many sends await the broker now. */
    public int sending() {
        return sending.get();
    }

    private void drain() {
        while (true) {
            if (sending.incrementAndGet() > inFlight) {
                sending.decrementAndGet(); // full: an acknowledgement drains again
                return;
            }
            List<T> next = queue.poll(1);
            if (next.isEmpty()) {
                sending.decrementAndGet();
                return;
            }
            CompletionStage<?> sent;
            try {
                sent = send.apply(next.get(0));
            } catch (RuntimeException e) {
                sending.decrementAndGet();
                onFailure.accept(e);
                return;
            }
            var done = sent.toCompletableFuture();
            if (done.isDone()) { // answered at once: go on in this loop rather than recurse
                sending.decrementAndGet();
                if (done.isCompletedExceptionally()) {
                    done.whenComplete((ok, failure) -> onFailure.accept(failure));
                    return;
                }
                continue;
            }
            sent.whenComplete((ok, failure) -> {
                sending.decrementAndGet();
                if (failure == null) {
                    drain();
                } else {
                    onFailure.accept(failure);
                }
            });
        }
    }
}
