package dev.gpucloud.billing.messaging;

import dev.gpucloud.billing.config.BillingConfig;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.PartitionFold;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.SkuRate;
import dev.gpucloud.billing.repository.FoldStore;
import dev.gpucloud.billing.repository.RecordOrigin;
import dev.gpucloud.billing.repository.RefusedUsageException;
import dev.gpucloud.billing.repository.StaleFoldException;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.TraceHeaders;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.vertx.mutiny.core.Vertx;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Folds {@code usage.events} in memory, per assigned partition ({@link PartitionFold}), and writes what it
 * folded, with the partitions' next offsets, to PostgreSQL in one transaction per snapshot ({@link FoldStore}):
 * every {@code gpucloud.billing.fold.snapshot-interval} or {@code snapshot-events}, and before partitions are
 * revoked. The database's offsets are the source of truth: on assignment the consumer is sought to them
 * ({@link FoldRebalanceListener}), records below them are skipped, and a snapshot whose partition moved on
 * meanwhile (this instance lost it) is refused and its fold dropped. The consumer group's committed offsets
 * follow each snapshot, for lag monitoring only.
 *
 * <p>A record that cannot be an event, or an event that contradicts its allocation, goes to
 * {@code usage.events.dlq} with the reason; the dead letters of a batch are acknowledged by the broker before
 * any snapshot moves the offsets past them. Only tasks of one {@link Lane}, on a thread of their own, touch
 * the folds: batches, timed snapshots, the outcome of a snapshot and rebalances; a snapshot's transaction runs
 * while the next batches are folded, one snapshot at a time.
 */
@ApplicationScoped
public class UsageConsumer {

    private static final Logger LOG = Logger.getLogger(UsageConsumer.class);
    private static final String METRIC = "gpucloud.billing.usage.events";
    static final String CHANNEL = "usage-in";

    /** A partition this instance folds, and the consumer that reads it (for committing its offsets). */
    private record Owned(TopicPartition partition, PartitionFold fold, KafkaConsumer<?, ?> consumer) {
    }

    private record Decoded(Owned owned, ConsumerRecord<String, byte[]> record, Envelope<UsageEvent> envelope) {
    }

    private final FoldStore store;
    private final PriceCatalog catalog;
    private final BillingConfig config;
    private final MeterRegistry registry;
    private final DeadLetters deadLetters;
    private final KafkaClientService kafka;
    private final Vertx vertx;
    private final Map<TopicPartition, Owned> folds = new ConcurrentHashMap<>();
    /**
     * Folding is CPU work: it runs on a thread of its own, never on the event loop, which must stay free for the
     * database client's I/O (a snapshot written while batches are folded on its event loop crawls).
     */
    private final ExecutorService foldThread = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "billing-fold");
        thread.setDaemon(true);
        return thread;
    });
    private final Lane lane = new Lane(foldThread);
    private static final int DECODERS = Math.max(1, Runtime.getRuntime().availableProcessors());
    /** Helpers of the fold thread for decoding (it decodes one slice itself). */
    private final ExecutorService decoders = Executors.newFixedThreadPool(Math.max(1, DECODERS - 1), runnable -> {
        Thread thread = new Thread(runnable, "billing-decode");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicBoolean timerQueued = new AtomicBoolean();
    private volatile long lastSnapshot = System.nanoTime();
    private long timer = -1;
    private final SnapshotIsolation isolation;
    private final Counter applied;
    private final Counter redelivered;
    private final Counter unowned;
    private final Tracer tracer;

    public UsageConsumer(FoldStore store, PriceCatalog catalog, BillingConfig config, MeterRegistry registry,
            DeadLetters deadLetters, KafkaClientService kafka, Vertx vertx, Tracer tracer) {
        this.store = store;
        this.tracer = tracer;
        this.catalog = catalog;
        this.config = config;
        this.registry = registry;
        this.deadLetters = deadLetters;
        this.kafka = kafka;
        this.vertx = vertx;
        this.isolation = new SnapshotIsolation(store, bootstrapServers());
        this.applied = registry.counter(METRIC, "outcome", "applied");
        this.redelivered = registry.counter(METRIC, "outcome", "redelivered");
        this.unowned = registry.counter(METRIC, "outcome", "not-owned");
    }

    private static String bootstrapServers() {
        var cfg = org.eclipse.microprofile.config.ConfigProvider.getConfig();
        return cfg.getOptionalValue("mp.messaging.incoming." + CHANNEL + ".bootstrap.servers", String.class)
                .or(() -> cfg.getOptionalValue("kafka.bootstrap.servers", String.class)).orElse("localhost:9092");
    }

    void start(@Observes StartupEvent startup) {
        long every = Math.max(50, config.fold().snapshotInterval().toMillis() / 2);
        timer = vertx.setPeriodic(every, id -> onTimer());
    }

    /** A graceful stop writes what is folded, so the next owner replays nothing. */
    void stop(@Observes ShutdownEvent shutdown) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        try {
            snapshotAndWait(Duration.ofSeconds(20));
        } catch (RuntimeException e) {
            LOG.warnf("no final snapshot at shutdown (the next owner replays from the stored offsets): %s", e.toString());
        }
        foldThread.shutdown();
        decoders.shutdown();
    }

    private void onTimer() {
        if (!timerQueued.compareAndSet(false, true)) {
            return;
        }
        lane.run(() -> {
            timerQueued.set(false);
            if (snapshotDue()) {
                startSnapshot();
            }
            return Uni.createFrom().voidItem();
        }).subscribe().with(ignored -> { }, e -> LOG.warnf("timed snapshot failed: %s", e.toString()));
    }

    private boolean snapshotDue() {
        return System.nanoTime() - lastSnapshot >= config.fold().snapshotInterval().toNanos();
    }

    /**
     * Folds one poll's records in memory and starts a snapshot if one is due. The returned Uni completes after
     * the batch's dead letters were acknowledged (so no snapshot started later can move the offsets past them
     * unsent); it waits for the snapshot being written only once {@code snapshot-events} are pending.
     */
    @Incoming(CHANNEL)
    public Uni<Void> consume(ConsumerRecords<String, byte[]> records) {
        return lane.run(() -> foldBatch(records));
    }

    private Uni<Void> foldBatch(ConsumerRecords<String, byte[]> records) {
        long batchStarted = System.nanoTime();
        registry.summary("gpucloud.billing.fold.batch.size").record(records.count());
        List<Decoded> decoded = new ArrayList<>(records.count());
        List<DeadLetter> dead = new ArrayList<>();
        Map<Owned, Set<String>> allocations = new HashMap<>();
        int below = 0;
        int notOwned = 0;
        List<Owned> admittedTo = new ArrayList<>(records.count());
        List<ConsumerRecord<String, byte[]>> admitted = new ArrayList<>(records.count());
        for (TopicPartition partition : records.partitions()) {
            List<ConsumerRecord<String, byte[]>> own = records.records(partition);
            Owned owned = folds.get(partition);
            if (owned == null) {
                notOwned += own.size(); // revoked, or dropped after a refused snapshot: the owner replays them
                continue;
            }
            boolean gap = false;
            for (ConsumerRecord<String, byte[]> record : own) {
                switch (owned.fold().admit(record.offset())) {
                    case BELOW -> below++;
                    case GAP -> gap = true;
                    case FOLD -> {
                        admittedTo.add(owned);
                        admitted.add(record);
                    }
                }
            }
            if (gap) {
                LOG.infof("skipped records of %s above its start offset %d: left from a poll before the consumer was "
                        + "sought there", partition, owned.fold().position());
            }
        }
        Object[] results = decodeAll(admitted);
        for (int i = 0; i < results.length; i++) {
            Owned owned = admittedTo.get(i);
            if (results[i] instanceof Envelope<?> envelope) {
                @SuppressWarnings("unchecked")
                Envelope<UsageEvent> usage = (Envelope<UsageEvent>) envelope;
                decoded.add(new Decoded(owned, admitted.get(i), usage));
                allocations.computeIfAbsent(owned, ignored -> new LinkedHashSet<>()).add(usage.payload().allocationId());
            } else {
                dead.add(new DeadLetter(admitted.get(i), (String) results[i]));
            }
        }
        redelivered.increment(below);
        unowned.increment(notOwned);
        int skippedBelow = below;
        int skippedNotOwned = notOwned;
        List<String> unknown = new ArrayList<>();
        allocations.forEach((owned, ids) -> unknown.addAll(owned.fold().unknown(ids)));
        return withRetries(store.dimensions(unknown), "the dimensions of " + unknown.size() + " allocations")
                .emitOn(foldThread)
                .flatMap(known -> {
                    Map<String, MeteredAllocation> byId = new HashMap<>();
                    known.forEach(a -> byId.put(a.allocationId(), a));
                    allocations.forEach((owned, ids) -> {
                        for (String id : ids) {
                            MeteredAllocation stored = byId.get(id);
                            if (stored != null) {
                                owned.fold().know(stored);
                            }
                        }
                    });
                    int folded = 0;
                    for (Decoded d : decoded) {
                        Span span = foldSpan(d);
                        var refused = d.owned().fold().fold(d.envelope().event().id(), d.envelope().payload());
                        Spans.end(span, refused.map(IllegalArgumentException::new).orElse(null));
                        if (refused.isPresent()) {
                            LOG.warnf("refused %s: %s", where(origin(d.record())), refused.get());
                            dead.add(new DeadLetter(d.record(), refused.get()));
                        } else {
                            folded++;
                        }
                    }
                    applied.increment(folded);
                    LOG.debugf("folded %d of a batch of %d records in %.1f ms (%d redelivered, %d not owned)", folded,
                            records.count(), (System.nanoTime() - batchStarted) / 1e6, skippedBelow, skippedNotOwned);
                    // in the order they were consumed, as a record-by-record consumer would have dead-lettered them
                    dead.sort(Comparator.comparing((DeadLetter d) -> d.record().topic())
                            .thenComparingInt(d -> d.record().partition())
                            .thenComparingLong(d -> d.record().offset()));
                    return deadLetters.send(dead);
                })
                .flatMap(v -> {
                    boolean full = pendingEvents() >= config.fold().snapshotEvents();
                    if (!full && !snapshotDue()) {
                        return Uni.createFrom().voidItem();
                    }
                    CompletableFuture<Void> started = startSnapshot();
                    // folding runs ahead of writing, but not without bound: past snapshot-events, wait for the write
                    return full ? Uni.createFrom().completionStage(started).replaceWithVoid()
                            : Uni.createFrom().voidItem();
                });
    }

    /**
     * The span a traced usage record is folded in: the step of its job's trace where the usage becomes part of an
     * invoice line (durable with the next snapshot, at most fold.snapshot-interval later).
     */
    private Span foldSpan(Decoded d) {
        UsageEvent usage = d.envelope().payload();
        Span span = Spans.childIfTraced(tracer, "usage.events fold", TraceHeaders.extract(d.record().headers()),
                SpanKind.CONSUMER, LogFields.JOB_ID, usage.jobId(), LogFields.TENANT, usage.tenant(),
                LogFields.ALLOCATION_ID, usage.allocationId(), "sku", usage.sku().code(),
                "invoice.month", YearMonth.from(usage.from().atOffset(ZoneOffset.UTC)).toString());
        span.setAttribute("units", usage.units());
        span.setAttribute("seconds", Duration.between(usage.from(), usage.to()).toSeconds());
        return span;
    }

    /**
     * Decodes the records (JSON and CloudEvents headers: most of a batch's CPU time), in slices on the decode
     * threads, one per core: per record its Envelope, or the reason it is malformed.
     */
    private Object[] decodeAll(List<ConsumerRecord<String, byte[]>> admitted) {
        Object[] results = new Object[admitted.size()];
        int slices = Math.min(DECODERS, Math.max(1, admitted.size() / 500));
        List<Future<?>> pending = new ArrayList<>(slices);
        for (int slice = 0; slice < slices; slice++) {
            int from = slice * admitted.size() / slices;
            int to = (slice + 1) * admitted.size() / slices;
            Runnable work = () -> {
                for (int i = from; i < to; i++) {
                    try {
                        Envelope<UsageEvent> envelope = decode(admitted.get(i));
                        requireReportLength(envelope.payload(), config.maxReportLength());
                        results[i] = envelope;
                    } catch (MalformedEventException e) {
                        results[i] = e.getMessage();
                    }
                }
            };
            if (slice == slices - 1) {
                work.run(); // the fold thread decodes a slice itself
            } else {
                pending.add(decoders.submit(work));
            }
        }
        for (Future<?> future : pending) {
            try {
                future.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while decoding a batch", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("decoding a batch failed", e.getCause());
            }
        }
        return results;
    }

    private long pendingEvents() {
        long pending = 0;
        for (Owned owned : folds.values()) {
            pending += owned.fold().pendingEvents();
        }
        return pending;
    }

    /** The snapshot being written, if any (read and changed only by lane tasks): at most one at a time. */
    private CompletableFuture<Void> writing;

    /**
     * Starts writing every partition's pending usage and offset in one transaction, unless a snapshot is being
     * written already; folding goes on meanwhile. Returns when the write completes (either way), without
     * waiting for it: a caller that must wait (revocation, shutdown) waits outside the lane. When the write
     * completes, a lane task applies the outcome ({@link #written}).
     */
    private CompletableFuture<Void> startSnapshot() {
        if (writing != null) {
            return writing;
        }
        List<Owned> owned = new ArrayList<>();
        List<PartitionFold.Snapshot> snapshots = new ArrayList<>();
        for (Owned o : folds.values()) {
            if (o.fold().hasPending()) {
                owned.add(o);
                snapshots.add(o.fold().snapshot());
            }
        }
        lastSnapshot = System.nanoTime();
        if (owned.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        writing = done;
        long started = System.nanoTime();
        withRetries(store.write(snapshots), "a snapshot of " + owned.size() + " partitions").subscribe().with(
                ok -> {
                    lane.run(() -> written(owned, snapshots, null, started, done));
                    done.complete(null);
                },
                failure -> {
                    lane.run(() -> written(owned, snapshots, failure, started, done));
                    done.complete(null);
                });
        return done;
    }

    /**
     * A snapshot's outcome, in the lane. Written: the folds start their next round from it and the group's
     * offsets follow. A partition whose stored offset had moved (another instance owns it now) is dropped, and
     * its consumer rejoins the group; any other failure, after the retry window, drops every fold and rejoins,
     * so the partitions replay from their stored offsets.
     */
    private Uni<Void> written(List<Owned> owned, List<PartitionFold.Snapshot> snapshots, Throwable failure,
            long started, CompletableFuture<Void> done) {
        if (writing == done) {
            writing = null;
        }
        if (failure == null) {
            long events = 0;
            int allocations = 0;
            List<Owned> current = new ArrayList<>();
            for (int i = 0; i < owned.size(); i++) {
                Owned o = owned.get(i);
                PartitionFold.Snapshot s = snapshots.get(i);
                events += s.events();
                allocations += s.allocations().size();
                reportNew(s);
                if (folds.get(o.partition()) == o) { // else dropped meanwhile: its next owner loads the stored offset
                    o.fold().committed(s);
                    o.fold().trim(config.fold().maxKnownAllocations());
                    current.add(o);
                }
            }
            registry.timer("gpucloud.billing.fold.snapshot").record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            registry.summary("gpucloud.billing.fold.snapshot.events").record(events);
            LOG.debugf("snapshot: %d events, %d allocations, %d partitions in %.1f ms", events, allocations,
                    owned.size(), (System.nanoTime() - started) / 1e6);
            commitOffsets(current);
        } else if (failure instanceof StaleFoldException stale) {
            LOG.warn(stale.getMessage());
            Set<KafkaConsumer<?, ?>> rejoin = new HashSet<>();
            for (StaleFoldException.Partition p : stale.stale()) {
                Owned dropped = folds.remove(new TopicPartition(p.topic(), p.partition()));
                if (dropped != null) {
                    rejoin.add(dropped.consumer());
                }
            }
            rejoin.forEach(UsageConsumer::rejoin);
            lastSnapshot = 0; // the other partitions' usage was not written: write it at once
        } else if (!isTransient(failure) && isolateRefused(owned, snapshots, failure)) {
            lastSnapshot = 0; // what the database takes is written at once, the rest is in the DLQ
        } else {
            LOG.errorf(failure, "a snapshot of %d partitions failed: dropping the folds, the partitions replay from "
                    + "their stored offsets", owned.size());
            Set<KafkaConsumer<?, ?>> rejoin = new HashSet<>();
            folds.values().forEach(o -> rejoin.add(o.consumer()));
            folds.clear();
            rejoin.forEach(UsageConsumer::rejoin);
        }
        return Uni.createFrom().voidItem();
    }

    /**
     * A snapshot the database refused for its data: the allocations at fault are found and their records
     * tried alone ({@link SnapshotIsolation}); the refused records are dead-lettered (acknowledged before
     * anything moves the offsets past them), the others folded again, and everyone else's usage stays folded.
     * False when no allocation alone is at fault (the caller then drops the folds and replays).
     */
    private boolean isolateRefused(List<Owned> owned, List<PartitionFold.Snapshot> snapshots, Throwable failure) {
        LOG.warnf("a snapshot of %d partitions was refused by the database (%s): isolating the records at fault",
                owned.size(), SnapshotIsolation.reason(failure));
        List<SnapshotIsolation.Suspect> suspects = new ArrayList<>();
        for (int i = 0; i < owned.size(); i++) {
            Owned o = owned.get(i);
            if (folds.get(o.partition()) != o) {
                continue;
            }
            for (PartitionFold.Pending pending : snapshots.get(i).allocations()) {
                suspects.add(new SnapshotIsolation.Suspect(o.partition(), snapshots.get(i).stored(),
                        o.fold().position(), pending));
            }
        }
        try {
            List<SnapshotIsolation.Isolated> isolated = isolation.isolate(suspects);
            if (isolated.isEmpty()) {
                return false;
            }
            List<String> ids = isolated.stream().map(SnapshotIsolation.Isolated::allocationId).toList();
            Map<String, MeteredAllocation> stored = new HashMap<>();
            store.dimensions(ids).await().atMost(config.databaseRetryWindow())
                    .forEach(a -> stored.put(a.allocationId(), a));
            List<DeadLetter> dead = new ArrayList<>();
            for (SnapshotIsolation.Isolated i : isolated) {
                dead.addAll(i.dead());
                Owned o = folds.get(i.partition());
                o.fold().discard(i.allocationId(), i.recordsOfRound());
                if (stored.containsKey(i.allocationId())) {
                    o.fold().know(stored.get(i.allocationId()));
                }
                for (SnapshotIsolation.Refold r : i.refold()) {
                    o.fold().fold(r.envelope().event().id(), r.envelope().payload())
                            .ifPresent(reason -> dead.add(new DeadLetter(r.record(), reason)));
                }
            }
            registry.counter(METRIC, "outcome", "isolated").increment(dead.size());
            deadLetters.send(dead).await().atMost(Duration.ofMinutes(1));
            return true;
        } catch (RuntimeException e) {
            LOG.errorf(e, "could not isolate the records a snapshot was refused for");
            return false;
        }
    }

    /**
     * Writes a snapshot of everything folded so far and waits for it (after the one being written, if any);
     * called outside the lane (rebalance listener, shutdown), never from a lane task.
     */
    private void snapshotAndWait(Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        CompletableFuture<Void> previous = lane.run(() -> Uni.createFrom().item(Optional.ofNullable(writing)))
                .await().atMost(patience).orElse(null);
        if (previous != null) {
            Uni.createFrom().completionStage(previous).await().atMost(remaining(deadline));
        }
        CompletableFuture<Void> mine = lane.run(() -> Uni.createFrom().item(startSnapshot())).await()
                .atMost(remaining(deadline));
        Uni.createFrom().completionStage(mine).await().atMost(remaining(deadline));
        // the outcome is applied by a lane task queued before this one
        lane.run(() -> Uni.createFrom().voidItem()).await().atMost(remaining(deadline));
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    }

    /** Held and flagged rates are reported once per allocation, when its first snapshot writes it. */
    private void reportNew(PartitionFold.Snapshot snapshot) {
        for (PartitionFold.Pending pending : snapshot.allocations()) {
            if (!pending.isNew() || pending.firstFrom() == null) {
                continue;
            }
            MeteredAllocation a = pending.dimensions();
            SkuRate rate = catalog.rate(a.sku(), a.capacityType(), pending.firstFrom());
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, a.jobId(), LogFields.TENANT, a.tenant(),
                    LogFields.ALLOCATION_ID, a.allocationId())) {
                warnOfRate(a, rate);
            }
        }
    }

    private void warnOfRate(MeteredAllocation a, SkuRate rate) {
        if (rate.isHeld()) {
            registry.counter(METRIC, "outcome", "held").increment();
            LOG.warnf("%s of job %s for tenant %s is held, not billed yet: %s", a.allocationId(), a.jobId(),
                    a.tenant(), rate.flag());
        } else if (rate.isFlagged()) {
            registry.counter(METRIC, "outcome", "flagged").increment();
            LOG.warnf("%s of job %s for tenant %s is billed at a fallback rate of %d micro-USD per hour, "
                    + "its invoice line is flagged: %s", a.allocationId(), a.jobId(), a.tenant(),
                    rate.microsPerHour(), rate.flag());
        }
    }

    /** The group's committed offsets follow the stored ones (lag monitoring); failures only cost freshness. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void commitOffsets(List<Owned> written) {
        Map<KafkaConsumer<?, ?>, Map<TopicPartition, OffsetAndMetadata>> byConsumer = new HashMap<>();
        for (Owned o : written) {
            if (folds.get(o.partition()) == o && o.consumer() != null) {
                byConsumer.computeIfAbsent(o.consumer(), ignored -> new HashMap<>())
                        .put(o.partition(), new OffsetAndMetadata(o.fold().stored()));
            }
        }
        byConsumer.forEach((consumer, offsets) -> ((KafkaConsumer) consumer).commitAsync(offsets).subscribe().with(
                ignored -> { }, e -> LOG.debugf("committing %s to the group failed (the database has them): %s",
                        offsets, e.toString())));
    }

    /** Makes the consumer leave and rejoin its group: its partitions come back through a fresh assignment. */
    private static void rejoin(KafkaConsumer<?, ?> consumer) {
        if (consumer == null) {
            return;
        }
        consumer.runOnPollingThread(c -> {
            c.enforceRebalance("billing fold dropped after a refused or failed snapshot");
        }).subscribe().with(ignored -> { }, e -> LOG.warnf("could not rejoin the group: %s", e.toString()));
    }

    // --- rebalances (called by FoldRebalanceListener on the consumer's polling thread) ---------------------

    void assigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        KafkaConsumer<?, ?> client = client(consumer);
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(partitions));
        Map<TopicPartition, Long> beginnings = consumer.beginningOffsets(partitions);
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
        List<Owned> fresh = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata group = committed.get(partition);
            long beginning = beginnings.getOrDefault(partition, 0L);
            long fallback = group != null ? group.offset() : beginning;
            long stored = store.loadOffset(partition.topic(), partition.partition(), fallback)
                    .onFailure().retry().withBackOff(Duration.ofMillis(200), Duration.ofSeconds(5))
                    .expireIn(config.databaseRetryWindow().toMillis())
                    .await().atMost(config.databaseRetryWindow().plusSeconds(5));
            long start = stored;
            long end = ends.getOrDefault(partition, Long.MAX_VALUE);
            if (stored > end) {
                // offsets are stored against one log: this one ends below, so it was recreated (or this is
                // another cluster); fold it from its beginning, the union keeps stored usage counted once
                LOG.warnf("%s ends at offset %d, below the stored offset %d: the topic is not the log the offset was"
                        + " stored against (recreated, or another cluster); folding it from its beginning, %d",
                        partition, end, stored, beginning);
                start = beginning;
            } else if (stored < beginning) {
                LOG.errorf("%s: records [%d, %d) were deleted by retention before they were folded; folding from %d",
                        partition, stored, beginning, beginning);
                start = beginning;
            }
            consumer.seek(partition, start);
            if (group == null || group.offset() != start) {
                // lag monitoring reads the group's offsets: they follow the stored ones from the start
                consumer.commitSync(Map.of(partition, new OffsetAndMetadata(start)));
            }
            LOG.infof("folding %s from offset %d (stored %d, group committed %s)", partition, start, stored,
                    group == null ? "none" : String.valueOf(group.offset()));
            fresh.add(new Owned(partition, new PartitionFold(partition.topic(), partition.partition(), stored, start),
                    client));
        }
        lane.run(() -> {
            fresh.forEach(o -> folds.put(o.partition(), o));
            return Uni.createFrom().voidItem();
        }).await().atMost(Duration.ofMinutes(1));
    }

    /** Partitions taken away in an orderly rebalance: what is folded is written first, then dropped. */
    void revoked(Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        try {
            snapshotAndWait(Duration.ofMinutes(1));
        } catch (RuntimeException e) {
            LOG.warnf("no snapshot before revoking %s (the next owner replays from the stored offsets): %s",
                    partitions, e.toString());
        }
        lane.run(() -> {
            partitions.forEach(folds::remove);
            return Uni.createFrom().voidItem();
        }).await().atMost(Duration.ofMinutes(1));
    }

    /** Partitions lost (this instance was out of the group): dropped unwritten, another owner may have moved on. */
    void lost(Collection<TopicPartition> partitions) {
        lane.run(() -> {
            partitions.forEach(folds::remove);
            return Uni.createFrom().voidItem();
        }).await().atMost(Duration.ofMinutes(1));
    }

    private KafkaConsumer<?, ?> client(Consumer<?, ?> consumer) {
        try {
            for (KafkaConsumer<?, ?> client : kafka.getConsumers(CHANNEL)) {
                if (client.unwrap() == consumer) {
                    return client;
                }
            }
            return kafka.getConsumer(CHANNEL);
        } catch (RuntimeException e) {
            LOG.warnf("no client for the %s consumer, group offsets will not follow the snapshots: %s", CHANNEL,
                    e.toString());
            return null;
        }
    }

    private <T> Uni<T> withRetries(Uni<T> work, String what) {
        return work.onFailure(UsageConsumer::isTransient).invoke(e -> LOG.warnf("database failed on %s, retrying: %s",
                        what, e.toString()))
                .onFailure(UsageConsumer::isTransient).retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(10))
                .expireIn(config.databaseRetryWindow().toMillis());
    }

    private static RecordOrigin origin(ConsumerRecord<String, byte[]> record) {
        return new RecordOrigin(record.topic(), record.partition(), record.offset());
    }

    /**
     * Decodes one record; a tombstone, a tenant that is not a valid tenant id, or a key that is not the
     * event's allocationId is malformed too.
     */
    static Envelope<UsageEvent> decode(ConsumerRecord<String, byte[]> record) {
        Envelope<UsageEvent> envelope = EventRecords.decode(Topics.USAGE_EVENTS, record);
        if (envelope.isTombstone()) {
            throw new MalformedEventException(Topics.USAGE_EVENTS.name() + ": record has no value");
        }
        try {
            Tenants.require(envelope.payload().tenant(), "tenant");
        } catch (IllegalArgumentException e) {
            // an invoice is only reachable for a valid tenant id: usage under any other could never be billed
            throw new MalformedEventException(Topics.USAGE_EVENTS.name() + ": " + e.getMessage());
        }
        if (!envelope.key().equals(envelope.payload().allocationId())) {
            throw new MalformedEventException(Topics.USAGE_EVENTS.name() + ": record key must be the allocationId '"
                    + envelope.payload().allocationId() + "', was '" + clip(envelope.key()) + "'");
        }
        return envelope;
    }

    /**
     * A single report longer than {@code max} (an agent that reports a year in one tick) is refused rather
     * than billed: it is far more likely a broken clock than a year of usage. The record keeps its reason in
     * the DLQ and can be replayed once checked (with a larger limit if it was real).
     */
    static void requireReportLength(UsageEvent usage, Duration max) {
        Duration length = Duration.between(usage.from(), usage.to());
        if (length.compareTo(max) > 0) {
            throw new MalformedEventException(Topics.USAGE_EVENTS.name() + ": usage interval [" + usage.from() + ", "
                    + usage.to() + ") of " + usage.allocationId() + " is " + length + " long, over "
                    + "gpucloud.billing.max-report-length (" + max + ")");
        }
    }

    /** A database that cannot be reached or is overloaded may recover; bad data never does. */
    static boolean isTransient(Throwable e) {
        if (e instanceof MalformedEventException || e instanceof RefusedUsageException
                || e instanceof StaleFoldException || e instanceof IllegalArgumentException
                || e instanceof IllegalStateException || e instanceof ArithmeticException
                || e instanceof java.time.DateTimeException || e instanceof NullPointerException) {
            return false;
        }
        if (e instanceof PgException pg && pg.getSqlState() != null) {
            String state = pg.getSqlState();
            // 22: data exception, 23: integrity constraint violation, 42: syntax error or access rule
            return !(state.startsWith("22") || state.startsWith("23") || state.startsWith("42"));
        }
        return true;
    }

    static String where(RecordOrigin origin) {
        return origin.topic() + "-" + origin.partition() + "@" + origin.offset();
    }

    private static String clip(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }
}
