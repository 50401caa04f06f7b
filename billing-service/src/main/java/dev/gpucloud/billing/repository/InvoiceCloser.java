package dev.gpucloud.billing.repository;

import dev.gpucloud.billing.config.BillingConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/** Closes due invoices at startup and then every {@code gpucloud.billing.close-check-interval}. */
@ApplicationScoped
public class InvoiceCloser {

    private static final Logger LOG = Logger.getLogger(InvoiceCloser.class);

    private final InvoiceBook book;
    private final BillingConfig config;
    private final Vertx vertx;
    private final AtomicBoolean running = new AtomicBoolean();
    private long timer = -1;

    public InvoiceCloser(InvoiceBook book, BillingConfig config, Vertx vertx) {
        this.book = book;
        this.config = config;
        this.vertx = vertx;
    }

    void start(@Observes StartupEvent startup) {
        long every = Math.max(1000, config.closeCheckInterval().toMillis());
        timer = vertx.setPeriodic(1000, every, id -> closeDue());
    }

    void stop(@Observes ShutdownEvent shutdown) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void closeDue() {
        if (!running.compareAndSet(false, true)) {
            return;
        }
        book.closeDue(Instant.now())
                .eventually(() -> running.set(false))
                .subscribe().with(closed -> {
                    if (closed > 0) {
                        LOG.infof("closed %d invoices whose grace period (%s) is over", closed, config.closeGrace());
                    }
                }, failure -> LOG.warnf("closing due invoices failed, will retry: %s", failure.toString()));
    }
}
