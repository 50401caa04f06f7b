package dev.gpucloud.billing.messaging;

import dev.gpucloud.billing.fold.Interval;
import dev.gpucloud.billing.fold.IntervalUnion;
import dev.gpucloud.billing.fold.MeteredAllocation;
import dev.gpucloud.billing.fold.PartitionFold;
import dev.gpucloud.billing.repository.FoldStore;
import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jboss.logging.Logger;

/**
 * Finds the records behind a snapshot the database refused for their data (not for being unreachable), so
 * that one poison record costs its own dead letter instead of a replay loop for the whole topic: the
 * snapshot's allocations are bisected with rolled-back trial writes ({@link FoldStore#probe}) down to the
 * ones at fault; their records are read again from the partition's folded range and tried one by one; the
 * refused ones are dead-lettered with the database's reason (its message and SQLSTATE, never SQL text), the
 * others are folded again. Runs blocking, on the fold's own thread, only after such a failure.
 */
final class SnapshotIsolation {

    private static final Logger LOG = Logger.getLogger(SnapshotIsolation.class);
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    /**
     * One allocation of a refused snapshot, with the partition it was folded from and the range of offsets
     * folded since the partition's stored offset ({@code [from, to)}, up to the fold's position now).
     */
    record Suspect(TopicPartition partition, long from, long to, PartitionFold.Pending pending) {
        String allocationId() {
            return pending.dimensions().allocationId();
        }
    }

    /** One refused allocation: its records of the round, those to fold again and the dead letters. */
    record Isolated(TopicPartition partition, String allocationId, int recordsOfRound, List<Refold> refold,
            List<DeadLetter> dead) {
    }

    /** A record of a refused allocation that the database takes alone: folded again. */
    record Refold(ConsumerRecord<String, byte[]> record, Envelope<UsageEvent> envelope) {
    }

    private final FoldStore store;
    private final String bootstrapServers;

    SnapshotIsolation(FoldStore store, String bootstrapServers) {
        this.store = store;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * The allocations at fault and what to do with their records; empty when every allocation alone is
     * accepted (the failure was not one allocation's data), so the caller falls back to a replay.
     */
    List<Isolated> isolate(List<Suspect> suspects) {
        List<Suspect> bad = new ArrayList<>();
        bisect(suspects, bad);
        List<Isolated> isolated = new ArrayList<>();
        for (Suspect suspect : bad) {
            isolated.add(isolate(suspect));
        }
        return isolated;
    }

    private void bisect(List<Suspect> suspects, List<Suspect> bad) {
        if (suspects.isEmpty() || probe(suspects.stream().map(Suspect::pending).toList()).isEmpty()) {
            return;
        }
        if (suspects.size() == 1) {
            bad.add(suspects.get(0));
            return;
        }
        int half = suspects.size() / 2;
        bisect(suspects.subList(0, half), bad);
        bisect(suspects.subList(half, suspects.size()), bad);
    }

    private Optional<Throwable> probe(List<PartitionFold.Pending> pending) {
        return store.probe(pending).await().atMost(PATIENCE);
    }

    private Isolated isolate(Suspect suspect) {
        String id = suspect.allocationId();
        List<ConsumerRecord<String, byte[]>> records = read(suspect.partition(), suspect.from(), suspect.to(), id);
        List<Refold> refold = new ArrayList<>();
        List<DeadLetter> dead = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            Envelope<UsageEvent> envelope;
            try {
                envelope = UsageConsumer.decode(record);
            } catch (MalformedEventException e) {
                continue; // dead-lettered when it was first folded
            }
            UsageEvent usage = envelope.payload();
            Interval interval = Interval.of(usage.from(), usage.to()).toMicros();
            PartitionFold.Pending alone = new PartitionFold.Pending(
                    MeteredAllocation.from(usage).withUsage(IntervalUnion.empty()), true, usage.nodeId(), usage.zone(),
                    IntervalUnion.empty().with(interval), envelope.event().id(), interval.from(), interval.to());
            Optional<Throwable> refused = probe(List.of(alone));
            if (refused.isPresent()) {
                dead.add(new DeadLetter(record, record.topic() + ": the database refused the usage of allocation '"
                        + clip(id) + "': " + reason(refused.get())));
            } else {
                refold.add(new Refold(record, envelope));
            }
        }
        LOG.warnf("isolated allocation %s of %s: %d of its %d records of the round refused by the database", id,
                suspect.partition(), dead.size(), records.size());
        return new Isolated(suspect.partition(), id, records.size(), refold, dead);
    }

    /** The records of {@code key} in [from, to) of a partition, read with a consumer of no group. */
    private List<ConsumerRecord<String, byte[]>> read(TopicPartition partition, long from, long to, String key) {
        Properties props = new Properties();
        props.putAll(KafkaAccess.loginSettings(
                name -> org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue(name, String.class)));
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "billing-isolation");
        List<ConsumerRecord<String, byte[]>> found = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(partition));
            consumer.seek(partition, from);
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (consumer.position(partition) < to && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500)).records(partition)) {
                    if (record.offset() < to && key.equals(record.key())) {
                        found.add(record);
                    }
                }
            }
        }
        return found;
    }

    /** A database failure as a dead-letter reason: its message and SQLSTATE, one line, clipped; no SQL text. */
    static String reason(Throwable failure) {
        String text;
        if (failure instanceof PgException pg) {
            text = pg.getErrorMessage() + " (SQLSTATE " + pg.getSqlState() + ")";
        } else {
            String message = failure.getMessage();
            text = failure.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        }
        int newline = text.indexOf('\n');
        return clip(newline < 0 ? text : text.substring(0, newline));
    }

    private static String clip(String text) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length() && out.length() < 200; i++) {
            char c = text.charAt(i);
            out.append(Character.isISOControl(c) ? '?' : c);
        }
        return text.length() > 200 ? out + "..." : out.toString();
    }
}
