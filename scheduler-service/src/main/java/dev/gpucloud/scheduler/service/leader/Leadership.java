package dev.gpucloud.scheduler.service.leader;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.messaging.LeaderInputs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * Active/standby election through PostgreSQL: a lease on the one row of {@code scheduler_leader}. Every
 * tick the leader renews its lease; every other instance tries to take it, which succeeds once the lease
 * has expired (or was released by a leader that shut down) and raises the epoch: to the database's clock in
 * milliseconds, or by one should that not be higher. Agents keep the highest epoch they saw across their
 * restarts, so epochs must keep rising even when the lease row starts again (a new or restored
 * database): a counter would start again below what the agents remember, and they would refuse every
 * command. Lease times are the
 * database's, so the instances' clocks play no part. The epoch fences the old leader: the database
 * refuses its writes ({@code gpucloud_fence}) and agents refuse its commands.
 *
 * <p>Why a lease row and not an advisory lock: a session's advisory lock outlives a paused process (its
 * connection stays open), so a leader stopped with SIGSTOP would keep it; a lease expires by itself.
 * Why not a Kafka group: the database is where the fencing has to hold.
 *
 * <p>A standby follows the leader's writes as they commit ({@link SchedulerEngine#follow}), so taking over
 * is a catch-up of the last tick's changes (the fleet, from inventory and telemetry, is kept warm all
 * along); then the leader's inputs start. Losing the lease stops the inputs and empties that state; the
 * instance then follows the new leader.
 */
@ApplicationScoped
public class Leadership {

    private static final Logger LOG = Logger.getLogger(Leadership.class);

    private final Pool pool;
    private final LeaderState state;
    private final SchedulerEngine engine;
    private final LeaderInputs inputs;
    private final SchedulerConfig config;
    private final AtomicBoolean busy = new AtomicBoolean();
    private final Counter takeovers;
    private final Counter depositions;
    private volatile boolean stopping;
    private final AtomicBoolean following = new AtomicBoolean();
    private volatile Vertx vertx;
    /** A one-shot try to lead, due when the leader's lease runs out (-1: none set). */
    private volatile long expiryTimer = -1;

    public Leadership(Pool pool, LeaderState state, SchedulerEngine engine, LeaderInputs inputs, SchedulerConfig config,
            MeterRegistry registry) {
        this.pool = pool;
        this.state = state;
        this.engine = engine;
        this.inputs = inputs;
        this.config = config;
        this.takeovers = Counter.builder("gpucloud.scheduler.leader.takeovers")
                .description("Times this instance became the leader").register(registry);
        this.depositions = Counter.builder("gpucloud.scheduler.leader.depositions")
                .description("Times this instance lost the lead while running").register(registry);
        Gauge.builder("gpucloud.scheduler.leader", state, s -> s.leads() ? 1 : 0)
                .description("1 while this instance is the active scheduler").register(registry);
        Gauge.builder("gpucloud.scheduler.leader.epoch", state, s -> s.leader() == null ? 0 : s.leader().epoch())
                .description("The leader's epoch as this instance last read it").register(registry);
    }

    void onStart(@Observes @Priority(2000) StartupEvent event, Vertx vertx) {
        this.vertx = vertx;
        state.onFenced(reason -> stepDown("a write was refused: " + reason));
        tick();
        vertx.setPeriodic(config.leaderTick().toMillis(), id -> {
            tick();
            follow();
        });
    }

    /** A leader that shuts down gives its lease back, so a standby takes over within a tick. */
    void onStop(@Observes ShutdownEvent event) {
        stopping = true;
        long epoch = state.epoch();
        if (epoch == 0) {
            return;
        }
        // refuse writes first, then give the lease back at once: the standby's takeover should not wait for
        // this instance's consumers and pools to close (anything of ours still in flight is fenced)
        state.deposed();
        try {
            pool.preparedQuery("update scheduler_leader set lease_until = '-infinity' where id = 1 and holder = $1"
                            + " and epoch = $2")
                    .execute(Tuple.of(state.instance(), epoch))
                    .await().atMost(Duration.ofSeconds(3));
            LOG.infof("%s gave up the lead (epoch %d) on shutdown", state.instance(), epoch);
        } catch (RuntimeException e) {
            LOG.warnf("could not give the lease back on shutdown (a standby takes over when it expires): %s",
                    e.getMessage());
        }
        inputs.stop();
    }

    private void tick() {
        if (stopping || !busy.compareAndSet(false, true)) {
            return;
        }
        Uni<Void> step = state.leads() ? renew() : tryToLead();
        step.subscribe().with(v -> busy.set(false), f -> {
            busy.set(false);
            LOG.debugf("leader lease: %s", f.toString());
        });
    }

    private Uni<Void> renew() {
        long epoch = state.epoch();
        return pool.withTransaction(c -> c.query("set local lock_timeout = " + lockTimeoutMillis()).execute()
                        .chain(() -> c.preparedQuery("update scheduler_leader set lease_until = now() + $1 * interval"
                                        + " '1 millisecond' where id = 1 and holder = $2 and epoch = $3"
                                        + " returning lease_until")
                                .execute(Tuple.of(config.leaderLease().toMillis(), state.instance(), epoch))))
                .ifNoItem().after(config.leaderLease()).fail() // as in tryToLead
                .invoke(rows -> {
                    if (state.epoch() != epoch) {
                        return; // deposed while the renewal was on its way
                    }
                    if (rows.rowCount() == 0) {
                        stepDown("another instance holds the lease now");
                    } else {
                        state.elected(epoch, instant(rows.iterator().next(), "lease_until"));
                    }
                })
                .replaceWithVoid();
    }

    private Uni<Void> tryToLead() {
        return pool.withTransaction(c -> c.query("set local lock_timeout = " + takeoverLockTimeoutMillis()).execute()
                        .chain(() -> c.preparedQuery("update scheduler_leader set epoch = greatest(epoch + 1, (extract(epoch from"
                                        + " clock_timestamp()) * 1000)::bigint), holder = $1,"
                                        + " address = $2, lease_until = now() + $3 * interval '1 millisecond',"
                                        + " acquired_at = now() where id = 1 and (lease_until < now() or holder = $1)"
                                        + " returning epoch, lease_until")
                                .execute(Tuple.of(state.instance(), state.address(), config.leaderLease().toMillis())))
                        .chain(won -> won.rowCount() > 0 ? Uni.createFrom().item(won)
                                : c.query("select holder, address, epoch, lease_until, case when isfinite(lease_until)"
                                                + " then (extract(epoch from lease_until - now()) * 1000)::bigint end"
                                                + " as remaining_ms from scheduler_leader where id = 1")
                                        .execute().invoke(this::observe).replaceWith((RowSet<Row>) null)))
                // a lease statement that outlasts the lease is of no use, and one that never ended (a connection
                // the database dropped without a word) would hold every later tick: give up on it, the next tick
                // tries again. The takeover after a win is not bounded by this: it replays what it must.
                .ifNoItem().after(config.leaderLease()).fail()
                .onFailure(Leadership::lockTimedOut).recoverWithUni(f -> endFencedWrites().replaceWith((RowSet<Row>) null))
                .chain(won -> won == null ? Uni.createFrom().voidItem() : takeOver(won.iterator().next()));
    }

    /**
     * The lease has run out but the takeover waited in vain for the row: a write transaction of the old leader
     * still holds it (the fence's share lock), its process paused or cut off. Such a transaction may no longer
     * commit, so rather than wait for the database to end it when it has idled a lease long, its backend is
     * ended now (the instances share one database role, which may do that); the next try to lead follows at
     * once. A leader whose lease has not run out is never touched.
     */
    private Uni<Void> endFencedWrites() {
        return pool.query("select count(pg_terminate_backend(l.pid)) as ended from pg_locks l, scheduler_leader s"
                        + " where s.id = 1 and s.lease_until < now() and l.locktype = 'relation'"
                        + " and l.relation = 'scheduler_leader'::regclass and l.mode = 'RowShareLock' and l.granted"
                        + " and l.pid <> pg_backend_pid()")
                .execute()
                .invoke(rows -> {
                    long ended = rows.iterator().next().getLong("ended");
                    if (ended > 0) {
                        LOG.infof("the lease ran out while %d write transaction(s) of the old leader held it: ended"
                                + " them, trying to lead again", ended);
                        tryAgainIn(0);
                    }
                })
                .replaceWithVoid();
    }

    private static boolean lockTimedOut(Throwable f) {
        for (Throwable c = f; c != null; c = c.getCause()) {
            if (c instanceof io.vertx.pgclient.PgException pg && "55P03".equals(pg.getSqlState())) {
                return true;
            }
        }
        return false;
    }

    /** Tries to lead once more after {@code delayMillis}, besides the ticks; one such try is pending at most. */
    private void tryAgainIn(long delayMillis) {
        Vertx v = vertx;
        if (v == null || stopping || expiryTimer != -1) {
            return;
        }
        expiryTimer = v.setTimer(Math.max(1, delayMillis), id -> {
            expiryTimer = -1;
            if (busy.get()) {
                tryAgainIn(50); // the step before this one is still on its way
            } else {
                tick();
            }
        });
    }

    /**
     * A standby replays the leader's writes as they commit (at every tick, a read of what changed since the
     * last), so that a takeover is a catch-up. Apart from the lease's ticks: a long first read must not delay
     * a try to lead.
     */
    private void follow() {
        if (stopping || state.leads() || !following.compareAndSet(false, true)) {
            return;
        }
        long started = System.currentTimeMillis();
        engine.follow().ifNoItem().after(config.operationTimeout()).fail().subscribe().with(rows -> {
            following.set(false);
            if (rows > 0) {
                LOG.debugf("followed the leader: %d row(s) in %d ms", (Object) rows, System.currentTimeMillis() - started);
            }
        }, f -> {
            following.set(false);
            LOG.debugf("could not follow the leader now: %s", f.toString());
        });
    }

    private void observe(RowSet<Row> rows) {
        if (rows.rowCount() == 0) {
            return;
        }
        Row r = rows.iterator().next();
        LeaderState.Leader before = state.leader();
        LeaderState.Leader now = r.getString("holder") == null ? null : new LeaderState.Leader(r.getString("holder"),
                r.getString("address"), r.getLong("epoch"), instant(r, "lease_until"));
        state.observed(now);
        Long remaining = r.getLong("remaining_ms");
        if (now != null && remaining != null && remaining >= 0 && remaining < config.leaderTick().toMillis()) {
            tryAgainIn(remaining + 20); // the lease runs out before the next tick: try right after, not a tick late
        }
        if (now != null && (before == null || before.epoch() != now.epoch())) {
            LOG.infof("%s is a standby; the leader is %s at %s (epoch %d)", state.instance(), now.instance(),
                    now.address(), now.epoch());
        }
    }

    private Uni<Void> takeOver(Row won) {
        long epoch = won.getLong("epoch");
        long started = System.currentTimeMillis();
        state.elected(epoch, instant(won, "lease_until"));
        takeovers.increment();
        LOG.infof("%s leads now (epoch %d); rebuilding its state from the database", state.instance(), epoch);
        return engine.takeOver()
                .invoke(restored -> {
                    if (state.epoch() != epoch) {
                        return;
                    }
                    inputs.start();
                    state.tookOver(epoch);
                    LOG.infof("%s took over in %d ms: %s", state.instance(), System.currentTimeMillis() - started,
                            restored);
                })
                .onFailure().invoke(f -> {
                    LOG.error("could not take over; giving the lead up", f);
                    stepDown("the takeover failed: " + f.getMessage());
                })
                .replaceWithVoid();
    }

    private void stepDown(String why) {
        if (state.leads()) {
            state.deposed();
        }
        depositions.increment();
        LOG.warnf("%s no longer leads: %s; it stops placing, commanding and writing, and stands by", state.instance(),
                why);
        inputs.stop();
        engine.stepDown().subscribe().with(v -> { }, f -> LOG.warn("could not empty the deposed state", f));
    }

    private long lockTimeoutMillis() {
        return Math.max(100, config.leaderLease().toMillis() / 2);
    }

    /**
     * How long a takeover waits for the old leader's writes in flight before it looks for ones that can no
     * longer commit: longer than a healthy write lasts, far shorter than the lease.
     */
    private long takeoverLockTimeoutMillis() {
        return Math.max(100, config.leaderLease().toMillis() / 6);
    }

    private static Instant instant(Row row, String column) {
        OffsetDateTime t = row.getOffsetDateTime(column);
        return t == null ? null : t.toInstant();
    }
}
