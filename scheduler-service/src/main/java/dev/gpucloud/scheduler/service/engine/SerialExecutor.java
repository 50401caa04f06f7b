package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.function.Supplier;

/**
 * Runs the scheduler's operations one at a time, in arrival order, on one Vert.x context. Each
 * operation (an in-memory change plus its database transaction) finishes before the next begins,
 * so the cluster model and the database never disagree, with no locks.
 */
@ApplicationScoped
public class SerialExecutor {

    private final Context context;
    private final Duration timeout;
    private final Queue<Runnable> queue = new ArrayDeque<>();
    private boolean busy;

    public SerialExecutor(Vertx vertx, SchedulerConfig config) {
        this.timeout = config.operationTimeout();
        Context root = vertx.getOrCreateContext();
        this.context = VertxContext.createNewDuplicatedContext(root);
        VertxContextSafetyToggle.setContextSafe(context, true);
    }

    /** Queues an operation; the returned Uni completes with its outcome. */
    public <T> Uni<T> run(Supplier<Uni<T>> operation) {
        return Uni.createFrom().emitter(emitter -> context.runOnContext(v -> {
            queue.add(() -> start(operation, emitter));
            if (!busy) {
                next();
            }
        }));
    }

    private <T> void start(Supplier<Uni<T>> operation, UniEmitter<? super T> emitter) {
        Uni<T> work;
        try {
            work = operation.get();
        } catch (Throwable failure) {
            emitter.fail(failure);
            next();
            return;
        }
        work.ifNoItem().after(timeout).failWith(() -> new OperationTimeoutException(
                        "a scheduler operation took longer than " + timeout + "; giving up on it"))
                .subscribe().with(
                item -> {
                    context.runOnContext(v -> next());
                    emitter.complete(item);
                },
                failure -> {
                    context.runOnContext(v -> next());
                    emitter.fail(failure);
                });
    }

    private void next() {
        Runnable task = queue.poll();
        busy = task != null;
        if (task != null) {
            task.run();
        }
    }

    /** An operation that did not finish in time: the database is slow or away; worth trying again. */
    public static final class OperationTimeoutException extends RuntimeException {
        public OperationTimeoutException(String message) {
            super(message);
        }
    }
}
