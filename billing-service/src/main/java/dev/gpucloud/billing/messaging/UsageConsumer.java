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

    public UsageConsumer(UsageLedger ledger, PriceCatalog catalog, BillingConfig config, MeterRegistry registry) {
        this.ledger = ledger;
        this.catalog = catalog;
        this.config = config;
        this.registry = registry;
    }

    @Incoming("usage-in")
    public Uni<Void> consume(ConsumerRecord<String, byte[]> record) {
        RecordOrigin origin = new RecordOrigin(record.topic(), record.partition(), record.offset());
        Envelope<UsageEvent> envelope;
        try {
            envelope = decode(record);
        } catch (MalformedEventException e) {
            deadLetter(origin, e);
            return Uni.createFrom().failure(e);
        }
        UsageEvent usage = envelope.payload();
        return ledger.apply(envelope, origin)
                .onFailure(UsageConsumer::isTransient).invoke(e -> LOG.warnf(
                        "database failed applying event %s of %s (%s), retrying: %s",
                        envelope.event().id(), usage.allocationId(), where(origin), e.toString()))
                .onFailure(UsageConsumer::isTransient).retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(10))
                .expireIn(config.databaseRetryWindow().toMillis())
                .onItem().invoke(applied -> report(envelope, applied))
                .onFailure().invoke(e -> deadLetter(origin, e))
                .replaceWithVoid();
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

    private void report(Envelope<UsageEvent> envelope, AppliedUsage applied) {
        UsageEvent usage = envelope.payload();
        if (applied.repeat()) {
            count("repeat");
            LOG.infof("ignored repeat of event %s: %s of job %s for tenant %s was already billed for it",
                    envelope.event().id(), usage.allocationId(), usage.jobId(), usage.tenant());
            return;
        }
        count("applied");
        if (applied.added().isZero()) {
            LOG.infof("%s of job %s for tenant %s already had [%s, %s): nothing added, %s in all (event %s)",
                    usage.allocationId(), usage.jobId(), usage.tenant(), usage.from(), usage.to(),
                    seconds(applied.allocation().usage().total()), envelope.event().id());
            return;
        }
        LOG.infof("billed %s of job %s for tenant %s: +%s of %s x%d %s in [%s, %s), %s in all (event %s)",
                usage.allocationId(), usage.jobId(), usage.tenant(), seconds(applied.added()), usage.sku().code(),
                usage.units(), usage.capacityType(), usage.from(), usage.to(),
                seconds(applied.allocation().usage().total()), envelope.event().id());
        SkuRate rate = catalog.rate(usage.sku(), usage.capacityType(), usage.from());
        if (rate.isFlagged()) {
            count("flagged");
            LOG.warnf("%s of job %s for tenant %s is billed at a fallback rate of %d micro-USD per hour, "
                    + "its invoice line is flagged: %s", usage.allocationId(), usage.jobId(), usage.tenant(),
                    rate.microsPerHour(), rate.flag());
        }
    }

    private void deadLetter(RecordOrigin origin, Throwable e) {
        count("dead-letter");
        LOG.warnf("dead-lettering %s to %s: %s", where(origin), Topics.USAGE_EVENTS.deadLetterTopic(), e.getMessage());
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

    private static String where(RecordOrigin origin) {
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
