package dev.gpucloud.agent.spool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Sends what is in the spool, oldest first, on a thread of its own, in rounds: each round sends up
 * to a batch of pending records, waits for the broker's answers, and removes from the spool only
 * what the broker acknowledged. When a send fails (the broker is down), it waits and tries again,
 * backing off up to a limit, for as long as it takes. A record may therefore reach the broker more
 * than once (an acknowledgement lost on the way), always with the same ce_id; never not at all.
 */
public final class SpoolSender implements AutoCloseable {

    private final Spool spool;
    private final SpoolSink sink;
    private final int maxBatch;
    private final Duration sendTimeout;
    private final Duration maxBackoff;
    private final Consumer<String> log;
    private final Object signal = new Object();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failedSends = new AtomicLong();
    private volatile boolean running;
    private volatile boolean wakeUp;
    private volatile String outage;
    private Thread thread;

    public SpoolSender(Spool spool, SpoolSink sink, int maxBatch, Duration sendTimeout, Duration maxBackoff,
            Consumer<String> log) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("max batch must be at least 1, was " + maxBatch);
        }
        this.spool = spool;
        this.sink = sink;
        this.maxBatch = maxBatch;
        this.sendTimeout = sendTimeout;
        this.maxBackoff = maxBackoff;
        this.log = log;
    }

    /** Starts the sending thread; what an earlier run left in the spool goes first. */
    public synchronized SpoolSender start() {
        if (thread == null) {
            running = true;
            thread = new Thread(this::loop, "spool-sender");
            thread.setDaemon(true);
            thread.start();
            int left = spool.size();
            if (left > 0) {
                log.accept("replaying " + left + " record(s) left in the spool " + spool.dir());
            }
            spool.recoveryProblems().forEach(log);
        }
        return this;
    }

    /** Writes {@code records} to the spool (durable when this returns) and has them sent. */
    public void submit(List<SpooledRecord> records) {
        if (records.isEmpty()) {
            return;
        }
        spool.append(records);
        wake();
    }

    /** Records acknowledged by the broker since start. */
    public long sent() {
        return sent.get();
    }

    /** Sends that failed and will be tried again. */
    public long failedSends() {
        return failedSends.get();
    }

    /** Records waiting for the broker. */
    public int pending() {
        return spool.size();
    }

    /** Waits until the spool is empty; false if it is not within {@code timeout}. */
    public boolean awaitEmpty(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (spool.size() > 0) {
            if (System.nanoTime() > until) {
                return false;
            }
            wake();
            Thread.sleep(20);
        }
        return true;
    }

    private void wake() {
        synchronized (signal) {
            wakeUp = true;
            signal.notifyAll();
        }
    }

    private void loop() {
        long backoffMillis = 0;
        while (running) {
            try {
                if (backoffMillis > 0) {
                    sleep(backoffMillis, false);
                }
                List<Spool.Entry> batch = spool.pending(maxBatch);
                if (batch.isEmpty()) {
                    sleep(1000, true);
                    continue;
                }
                int failures = round(batch);
                if (failures == 0) {
                    if (outage != null) {
                        log.accept("the broker acknowledges again: spool sending resumed (" + spool.size()
                                + " record(s) still spooled)");
                        outage = null;
                    }
                    backoffMillis = 0;
                } else {
                    backoffMillis = backoffMillis == 0 ? 200 : Math.min(backoffMillis * 2, maxBackoff.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.accept("spool sender: " + e);
                backoffMillis = Math.max(backoffMillis, 1000);
            }
        }
    }

    /** Sends one batch and acknowledges what the broker took; the number of failures. */
    private int round(List<Spool.Entry> batch) throws InterruptedException {
        List<CompletableFuture<Void>> futures = new ArrayList<>(batch.size());
        for (Spool.Entry entry : batch) {
            CompletableFuture<Void> future;
            try {
                future = sink.send(entry.record()).toCompletableFuture();
            } catch (RuntimeException e) {
                future = CompletableFuture.failedFuture(e);
            }
            futures.add(future);
        }
        int failures = 0;
        String firstError = null;
        long deadline = System.nanoTime() + sendTimeout.toNanos();
        for (int i = 0; i < futures.size(); i++) {
            try {
                futures.get(i).get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                spool.ack(batch.get(i));
                sent.incrementAndGet();
            } catch (ExecutionException | TimeoutException e) {
                failures++;
                failedSends.incrementAndGet();
                if (firstError == null) {
                    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                    firstError = cause.getClass().getSimpleName() + ": " + cause.getMessage();
                }
            }
        }
        if (failures > 0 && outage == null) {
            outage = firstError;
            log.accept("the broker did not acknowledge " + failures + " of " + batch.size()
                    + " spooled record(s) (" + firstError + "); they stay in the spool and are sent again");
        }
        return failures;
    }

    private void sleep(long millis, boolean wakeable) throws InterruptedException {
        synchronized (signal) {
            if (wakeable && wakeUp) {
                wakeUp = false;
                return;
            }
            signal.wait(millis);
            if (wakeable) {
                wakeUp = false;
            }
        }
    }

    /** Stops sending; what is still spooled stays on disk for the next start. */
    @Override
    public synchronized void close() {
        running = false;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            thread = null;
        }
    }
}
