package dev.gpucloud.billing.messaging;

import io.smallrye.mutiny.Uni;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Runs asynchronous operations one after the other, each starting when the previous one completed (either
 * way): the folding of a batch, a timed snapshot and a rebalance never touch the in-memory folds at once.
 * Work starts when it is queued, not when the returned Uni is subscribed, and it starts on the lane's executor
 * (its asynchronous steps continue wherever they complete).
 */
final class Lane {

    private final Executor executor;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);

    Lane(Executor executor) {
        this.executor = executor;
    }

    synchronized <T> Uni<T> run(Supplier<Uni<T>> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletableFuture<Void> previous = tail;
        tail = done;
        previous.whenCompleteAsync((ignored, alsoIgnored) -> {
            Uni<T> uni;
            try {
                uni = work.get();
            } catch (Throwable e) {
                done.complete(null);
                result.completeExceptionally(e);
                return;
            }
            uni.subscribe().with(item -> {
                done.complete(null);
                result.complete(item);
            }, failure -> {
                done.complete(null);
                result.completeExceptionally(failure);
            });
        }, executor);
        return Uni.createFrom().completionStage(result);
    }
}
