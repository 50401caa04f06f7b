package dev.gpucloud.billing.messaging;

import dev.gpucloud.billing.config.BillingConfig;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.SkuRate;
import dev.gpucloud.billing.repository.AppliedUsage;
import dev.gpucloud.billing.repository.RecordOrigin;
import dev.gpucloud.billing.repository.RefusedUsageException;
import dev.gpucloud.billing.repository.UsageLedger;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import io.smallrye.mutiny.Multi;
import dev.gpucloud.billing.repository.UsageBatch;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Folds {@code usage.events} into the ledger. A record that cannot be an event, or an event that
 * contradicts its allocation, fails its message, and SmallRye writes it to {@code usage.events.dlq} with
 * the reason in the {@code dead-letter-reason} header; the consumer goes on with the next record. A
 * failing database is retried (with back-off, up to the configured window) before a record is given up.
 */
@ApplicationScoped
public class UsageConsumer {

    private static final Logger LOG = Logger.getLogger(UsageConsumer.class);
    private static final String METRIC = "gpucloud.billing.usage.events";

    private final UsageLedger ledger;
    private final PriceCatalog catalog;
    private final BillingConfig config;
    private final MeterRegistry registry;
    private final DeadLetters deadLetters;

    public UsageConsumer(UsageLedger ledger, PriceCatalog catalog, BillingConfig config, MeterRegistry registry,
            DeadLetters deadLetters) {
        this.ledger = ledger;
        this.catalog = catalog;
        this.config = config;
        this.registry = registry;
        this.deadLetters = deadLetters;
    }

    /**
     * Folds one poll's batch of records: the decodable ones in one database transaction (see
     * {@link UsageLedger#applyBatch}), the rest, and any the ledger refuses, to the dead-letter topic with the
     * reason. The returned Uni completes only after the transaction committed and the dead letters were
     * acknowledged; SmallRye commits the batch's offsets after that.
     */
    @Incoming("usage-in")
    public Uni<Void> consume(ConsumerRecords<String, byte[]> records) {
        List<UsageBatch.Item> items = new ArrayList<>(records.count());
        List<DeadLetter> dead = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            RecordOrigin origin = new RecordOrigin(record.topic(), record.partition(), record.offset());
            try {
                Envelope<UsageEvent> envelope = decode(record);
                requireReportLength(envelope.payload(), config.maxReportLength());
                items.add(new UsageBatch.Item(envelope, origin));
            } catch (MalformedEventException e) {
                dead.add(new DeadLetter(record, e.getMessage()));
            }
        }
        long started = System.nanoTime();
        registry.summary("gpucloud.billing.fold.batch.size").record(records.count());
        return withRetries(ledger.applyBatch(items), "a batch of " + items.size() + " usage events")
                .invoke(() -> registry.timer("gpucloud.billing.fold.batch.transaction")
                        .record(System.nanoTime() - started, java.util.concurrent.TimeUnit.NANOSECONDS))
                .onFailure(e -> !isTransient(e)).recoverWithUni(e -> {
                    LOG.warnf("a batch of %d usage events failed (%s): applying them one by one to find the bad one",
                            items.size(), e.toString());
                    return oneByOne(items);
                })
                .flatMap(batch -> {
                    report(batch);
                    for (UsageBatch.Refused refused : batch.refused()) {
                        dead.add(new DeadLetter(find(records, refused.item().origin()), refused.reason()));
                    }
                    // in the order they were consumed, as a record-by-record consumer would have dead-lettered them
                    dead.sort(java.util.Comparator.comparing((DeadLetter d) -> d.record().topic())
                            .thenComparingInt(d -> d.record().partition())
                            .thenComparingLong(d -> d.record().offset()));
                    return deadLetters.send(dead);
                });
    }

    /** The batch applied event by event, each in its own transaction; an event the database refuses is refused alone. */
    private Uni<UsageBatch> oneByOne(List<UsageBatch.Item> items) {
        return Multi.createFrom().iterable(items)
                .onItem().transformToUniAndConcatenate(item -> withRetries(ledger.apply(item.envelope(), item.origin()),
                        "event " + item.envelope().event().id())
                        .map(usage -> (Object) new UsageBatch.Applied(item, usage))
                        .onFailure(e -> !isTransient(e)).recoverWithItem(e -> new UsageBatch.Refused(item,
                                e.getMessage() == null ? e.toString() : e.getMessage())))
                .collect().asList()
                .map(results -> new UsageBatch(
                        results.stream().filter(UsageBatch.Applied.class::isInstance).map(UsageBatch.Applied.class::cast)
                                .toList(),
                        results.stream().filter(UsageBatch.Refused.class::isInstance).map(UsageBatch.Refused.class::cast)
                                .toList()));
    }

    private <T> Uni<T> withRetries(Uni<T> work, String what) {
        return work.onFailure(UsageConsumer::isTransient).invoke(e -> LOG.warnf("database failed applying %s, retrying: %s",
                        what, e.toString()))
                .onFailure(UsageConsumer::isTransient).retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(10))
                .expireIn(config.databaseRetryWindow().toMillis());
    }

    private static ConsumerRecord<String, byte[]> find(ConsumerRecords<String, byte[]> records, RecordOrigin origin) {
        for (ConsumerRecord<String, byte[]> record : records) {
            if (record.partition() == origin.partition() && record.offset() == origin.offset()
                    && record.topic().equals(origin.topic())) {
                return record;
            }
        }
        throw new IllegalStateException("record " + where(origin) + " is not in its batch");
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

    private void report(UsageBatch batch) {
        int applied = 0;
        int repeats = 0;
        for (UsageBatch.Applied item : batch.applied()) {
            report(item.item().envelope(), item.usage());
            if (item.usage().repeat()) {
                repeats++;
            } else {
                applied++;
            }
        }
        for (UsageBatch.Refused refused : batch.refused()) {
            LOG.warnf("refused %s: %s", where(refused.item().origin()), refused.reason());
        }
        LOG.debugf("folded a batch: %d usage events applied, %d repeats ignored, %d refused", applied, repeats,
                batch.refused().size());
    }

    private void report(Envelope<UsageEvent> envelope, AppliedUsage applied) {
        UsageEvent usage = envelope.payload();
        if (applied.repeat()) {
            count("repeat");
            LOG.debugf("ignored repeat of event %s: %s of job %s for tenant %s was already billed for it",
                    envelope.event().id(), usage.allocationId(), usage.jobId(), usage.tenant());
            return;
        }
        count("applied");
        if (applied.added().isZero()) {
            LOG.debugf("%s of job %s for tenant %s already had [%s, %s): nothing added, %s in all (event %s)",
                    usage.allocationId(), usage.jobId(), usage.tenant(), usage.from(), usage.to(),
                    seconds(applied.allocation().usage().total()), envelope.event().id());
            return;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debugf("billed %s of job %s for tenant %s: +%s of %s x%d %s in [%s, %s), %s in all (event %s)",
                    usage.allocationId(), usage.jobId(), usage.tenant(), seconds(applied.added()), usage.sku().code(),
                    usage.units(), usage.capacityType(), usage.from(), usage.to(),
                    seconds(applied.allocation().usage().total()), envelope.event().id());
        }
        SkuRate rate = catalog.rate(usage.sku(), usage.capacityType(), usage.from());
        if (rate.isHeld()) {
            count("held");
            LOG.warnf("%s of job %s for tenant %s is held, not billed yet: %s", usage.allocationId(), usage.jobId(),
                    usage.tenant(), rate.flag());
        } else if (rate.isFlagged()) {
            count("flagged");
            LOG.warnf("%s of job %s for tenant %s is billed at a fallback rate of %d micro-USD per hour, "
                    + "its invoice line is flagged: %s", usage.allocationId(), usage.jobId(), usage.tenant(),
                    rate.microsPerHour(), rate.flag());
        }
    }

    /** A database that cannot be reached or is overloaded may recover; bad data never does. */
    static boolean isTransient(Throwable e) {
        if (e instanceof MalformedEventException || e instanceof RefusedUsageException
                || e instanceof IllegalArgumentException || e instanceof ArithmeticException) {
            return false;
        }
        if (e instanceof PgException pg && pg.getSqlState() != null) {
            String state = pg.getSqlState();
            // 22: data exception, 23: integrity constraint violation, 42: syntax error or access rule
            return !(state.startsWith("22") || state.startsWith("23") || state.startsWith("42"));
        }
        return true;
    }

    private void count(String outcome) {
        registry.counter(METRIC, "outcome", outcome).increment();
    }

    static String where(RecordOrigin origin) {
        return origin.topic() + "-" + origin.partition() + "@" + origin.offset();
    }

    private static String seconds(Duration duration) {
        if (duration.getNano() == 0) {
            return duration.getSeconds() + " s";
        }
        return String.format("%.3f s", duration.toNanos() / 1e9);
    }

    private static String clip(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }
}
