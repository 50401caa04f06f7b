package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.Collection;
import java.util.function.Function;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * How the engine's work runs: each operation alone on the {@link SerialExecutor}, its writes in fenced
 * transactions ({@link #tx}), and its {@link Changes} replayed into {@link Memory} only once they committed,
 * then told to WatchJob streams, with the outbox sent on.
 */
final class Transactions {

    private final Mutiny.SessionFactory sessions;
    private final SerialExecutor serial;
    private final Outbox outbox;
    private final JobWatchers watchers;
    private final LeaderState leader;
    private final SchedulerConfig config;
    private final Work.Tools tools;

    Transactions(Mutiny.SessionFactory sessions, SerialExecutor serial, Outbox outbox, JobWatchers watchers,
            LeaderState leader, SchedulerConfig config, Work.Tools tools) {
        this.sessions = sessions;
        this.serial = serial;
        this.outbox = outbox;
        this.watchers = watchers;
        this.leader = leader;
        this.config = config;
        this.tools = tools;
    }

    /**
     * A transaction that writes under this instance's epoch: its first statement is the database's fence
     * ({@code gpucloud_fence}), which refuses it once another instance leads; that deposes this one, and the
     * write fails with {@link NotLeaderException} (UNAVAILABLE to a gRPC caller, with the leader's address).
     * What it changes is noted in {@code changes}, for the caller to apply once it committed.
     */
    <T> Uni<T> tx(Changes changes, Function<Work, Uni<T>> work) {
        long epoch = leader.epoch();
        if (epoch == 0) {
            return Uni.createFrom().failure(leader.notLeader());
        }
        int idleMillis = (int) Math.min(Integer.MAX_VALUE, config.leaderLease().toMillis());
        // HQL, not a native query: Hibernate plans a native query with a result type anew on every call (LeaderRow)
        return sessions.withTransaction(s -> s.createSelectionQuery(
                                "select cast(function('gpucloud_fence', :claimed, :idle) as Long) from LeaderRow where id = 1",
                                Long.class)
                        .setParameter("claimed", epoch).setParameter("idle", idleMillis).getSingleResult()
                        .chain(() -> work.apply(new Work(tools, s, changes, epoch))))
                .onFailure(DatabaseFailures::isFenced).transform(f -> leader.fenced(DatabaseFailures.clip(f)));
    }

    /**
     * Runs one operation through the serial executor; once it succeeded, its changes reach memory and
     * watchers, and the outbox is sent on.
     */
    <T> Uni<T> operation(Function<Changes, Uni<T>> body) {
        Changes changes = new Changes();
        return serial.run(() -> body.apply(changes).invoke(() -> committed(changes))).invoke(this::publishOutbox)
                .invoke(afterOperation);
    }

    /** What runs after each operation that succeeded (the engine's look at jobs whose dependencies moved). */
    private Runnable afterOperation = () -> { };

    void afterOperation(Runnable then) {
        this.afterOperation = then;
    }

    /** Inside an operation: a transaction of its own committed, so its changes reach memory and watchers now. */
    void committed(Changes changes) {
        tools.memory().apply(changes);
        changes.events.forEach(watchers::publish);
    }

    void publishOutbox() {
        if (leader.leads()) {
            outbox.kick();
        }
    }

    /** A failure of the moment (the database's) or of the lead (deposed): the work is not the data's fault. */
    static boolean notNow(Throwable f) {
        return f instanceof NotLeaderException || DatabaseFailures.isTransient(f);
    }

    /**
     * Runs {@code step} for each item, one after another, without nesting one Uni in the next: a chain of a
     * thousand nested calls (a host-lost sweep over a big fleet) overflows the stack when subscribed.
     */
    static <T> Uni<Void> inTurn(Collection<T> items, Function<T, Uni<Void>> step) {
        return Multi.createFrom().<T>iterable(items)
                .onItem().transformToUniAndConcatenate(step::apply)
                .collect().asList().replaceWithVoid();
    }
}
