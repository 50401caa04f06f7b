package dev.gpucloud.cli;

import dev.gpucloud.contracts.events.AuditEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gpucloud audit}: reads the audit trail ({@code audit.events}) from the broker, as it stands now, and
 * prints the newest records that pass the filters, oldest first. It reads with no consumer group, so it moves
 * nobody's offsets; who may read the topic at all is the broker's to decide.
 */
@Command(name = "audit", description = "Every mutating call (submit, cancel, catalog change, invoice close and"
        + " adjustment), accepted or refused:"
        + " who, tenant, what, when, from where, result; read from the audit.events topic.")
final class AuditTrailCommand implements Callable<Integer> {

    /** The most records one run prints. */
    static final int MAX_LIMIT = 100_000;
    /** A century: further back than any broker keeps records, and far from Instant's limits. */
    private static final Duration LONGEST_SINCE = Duration.ofDays(36_500);
    private static final com.fasterxml.jackson.databind.ObjectMapper YAML_SOURCE =
            new com.fasterxml.jackson.databind.ObjectMapper();
    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(s|m|h|d)");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--bootstrap-servers", defaultValue = "${env:KAFKA_BOOTSTRAP_SERVERS:-localhost:9092}",
            paramLabel = "HOST:PORT", description = "The broker (default: ${DEFAULT-VALUE}; env"
                    + " KAFKA_BOOTSTRAP_SERVERS).")
    String bootstrap;
    @Option(names = "--kafka-config", paramLabel = "FILE", defaultValue = "${env:GPUCLOUD_KAFKA_CONFIG}",
            description = "Kafka client settings to log in with (TLS and SASL), as Kafka's tools take them; "
                    + "./gpucloud audit passes the stack's auditor login (env GPUCLOUD_KAFKA_CONFIG).")
    java.nio.file.Path kafkaConfig;
    @Option(names = "--tenant", description = "Only calls for this tenant.")
    String tenant;
    @Option(names = "--who", paramLabel = "SUBJECT", description = "Only calls by this subject (the token's).")
    String who;
    @Option(names = "--action", description = "Only this action: its full name (scheduler.SubmitJob) or its"
            + " last part (SubmitJob, cancel), any case.")
    String action;
    @Option(names = "--since", paramLabel = "DURATION", description = "Only the last DURATION: 90s, 15m, 2h, 7d"
            + " (or ISO-8601, PT1H30M).")
    String since;
    @Option(names = "--limit", defaultValue = "100", description = "At most this many records, the newest"
            + " (default: ${DEFAULT-VALUE}).")
    int limit;
    /** text or wide (a table), json (one record a line, as audit.events holds it) or yaml (a list of them). */
    @CommandLine.Mixin
    Output output;
    @Option(names = "--timeout", defaultValue = "10", paramLabel = "SECONDS", hidden = true,
            description = "How long to wait for the broker.")
    int timeoutSeconds;

    @Override
    public Integer call() {
        Output.Format format = output.format(Output.Format.values());
        Duration window = since == null ? null : duration(since);
        if (limit < 1 || limit > MAX_LIMIT) {
            throw bad("--limit must be within 1.." + MAX_LIMIT + ", was " + limit);
        }
        if (tenant != null) {
            try {
                Tenants.require(tenant, "tenant");
            } catch (IllegalArgumentException e) {
                throw bad("--tenant must be a tenant id (1..63 lower-case letters, digits or dashes), was '"
                        + GpucloudCli.clip(tenant, 64) + "'");
            }
        }
        if (who != null && who.isBlank()) {
            throw bad("--who must name a subject");
        }
        if (action != null && action.isBlank()) {
            throw bad("--action must name an action, e.g. SubmitJob");
        }
        Instant from = window == null ? null : Instant.now().minus(window);
        List<AuditEvent> shown = read(from);
        PrintWriter out = spec.commandLine().getOut();
        if (format == Output.Format.JSON) {
            shown.forEach(e -> out.println(EventCodec.encodeToString(e)));
        } else if (format == Output.Format.YAML) {
            com.fasterxml.jackson.databind.node.ArrayNode list = com.fasterxml.jackson.databind.node.JsonNodeFactory
                    .instance.arrayNode();
            for (AuditEvent e : shown) {
                try {
                    list.add(YAML_SOURCE.readTree(EventCodec.encodeToString(e)));
                } catch (java.io.IOException unreadable) {
                    throw new IllegalStateException(unreadable);
                }
            }
            out.print(output.document(list));
        } else {
            boolean wide = format == Output.Format.WIDE;
            Output.Table table = wide ? new Output.Table("TIME", "WHO", "ROLES", "TENANT", "ACTION", "TARGET", "FROM",
                    "RESULT") : new Output.Table("TIME", "WHO", "TENANT", "ACTION", "TARGET", "FROM", "RESULT");
            for (AuditEvent e : shown) {
                String result = e.reason().isEmpty() ? e.result() : e.result() + ": " + (wide ? e.reason()
                        : GpucloudCli.clip(e.reason(), 100));
                if (wide) {
                    table.row(e.occurredAt(), e.subject(), String.join(",", e.roles()), e.tenant(), e.action(),
                            e.target(), e.from(), result);
                } else {
                    table.row(e.occurredAt().truncatedTo(ChronoUnit.MILLIS), GpucloudCli.clip(e.subject(), 20),
                            e.tenant(), GpucloudCli.clip(e.action(), 22), GpucloudCli.clip(e.target(), 28), e.from(),
                            result);
                }
            }
            output.print(out, table);
        }
        out.flush();
        return 0;
    }

    /** The newest {@link #limit} records at or after {@code from} (null: all) that pass the filters, oldest first. */
    private List<AuditEvent> read(Instant from) {
        Properties props = new Properties();
        if (kafkaConfig != null) {
            try {
                props.putAll(dev.gpucloud.contracts.kafka.KafkaAccess.clientConfig(kafkaConfig));
            } catch (java.io.IOException e) {
                throw new BrokerProblem("cannot read the Kafka client settings in " + kafkaConfig + ": " + e);
            }
        }
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(timeoutSeconds * 1000));
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(timeoutSeconds * 1000));
        Deque<AuditEvent> newest = new ArrayDeque<>();
        int unreadable = 0;
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(Topics.AUDIT_EVENTS.name());
            if (infos == null || infos.isEmpty()) {
                throw new BrokerProblem("the broker at " + bootstrap + " has no topic "
                        + Topics.AUDIT_EVENTS.name() + " (nothing audited yet?)");
            }
            List<TopicPartition> partitions = infos.stream().map(p -> new TopicPartition(p.topic(), p.partition()))
                    .toList();
            consumer.assign(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            if (from == null) {
                consumer.seekToBeginning(partitions);
            } else {
                Map<TopicPartition, Long> at = new HashMap<>();
                partitions.forEach(p -> at.put(p, from.toEpochMilli()));
                Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(at);
                partitions.forEach(p -> consumer.seek(p, found.get(p) == null ? end.get(p) : found.get(p).offset()));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(Math.max(timeoutSeconds, 1) * 6L).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                if (System.nanoTime() - deadline > 0) {
                    throw new BrokerProblem("reading " + Topics.AUDIT_EVENTS.name() + " from " + bootstrap
                            + " did not reach its end in time");
                }
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.offset() >= end.get(new TopicPartition(record.topic(), record.partition()))) {
                        continue;
                    }
                    AuditEvent event;
                    try {
                        event = EventRecords.decode(Topics.AUDIT_EVENTS, record).payload();
                    } catch (RuntimeException malformed) {
                        unreadable++;
                        continue;
                    }
                    if (event != null && passes(event, from)) {
                        newest.addLast(event);
                        if (newest.size() > limit * 4 + 1024) { // keep memory bounded; sorted and cut below
                            trim(newest);
                        }
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            throw new BrokerProblem("cannot reach the broker at " + bootstrap + " within " + timeoutSeconds
                    + " s; start the stack with ./gpucloud up, or point --bootstrap-servers (env"
                    + " KAFKA_BOOTSTRAP_SERVERS) at a running one");
        } catch (KafkaException e) {
            throw new BrokerProblem("reading " + Topics.AUDIT_EVENTS.name() + " from " + bootstrap
                    + " failed: " + GpucloudCli.firstLine(String.valueOf(e.getMessage())));
        }
        if (unreadable > 0) {
            spec.commandLine().getErr().println("note: skipped " + unreadable + " record(s) of "
                    + Topics.AUDIT_EVENTS.name() + " that are not audit records");
        }
        trim(newest);
        return new ArrayList<>(newest);
    }

    private void trim(Deque<AuditEvent> events) {
        List<AuditEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparing(AuditEvent::occurredAt));
        events.clear();
        events.addAll(sorted.subList(Math.max(0, sorted.size() - limit), sorted.size()));
    }

    private boolean passes(AuditEvent e, Instant from) {
        if (from != null && e.occurredAt().isBefore(from)) {
            return false;
        }
        if (tenant != null && !tenant.equals(e.tenant())) {
            return false;
        }
        if (who != null && !who.equals(e.subject())) {
            return false;
        }
        if (action != null) {
            String a = e.action().toLowerCase(Locale.ROOT);
            String want = action.toLowerCase(Locale.ROOT);
            String last = a.substring(a.lastIndexOf('.') + 1);
            // the full name, its last part (CancelJob), or that without "Job" (cancel), in any case
            return a.equals(want) || last.equals(want) || last.equals(want + "job");
        }
        return true;
    }

    /** A duration as people write it (90s, 15m, 2h, 7d) or in ISO-8601; more than zero. */
    Duration duration(String text) {
        try {
            return durationOf(text);
        } catch (IllegalArgumentException e) {
            throw bad("--since " + e.getMessage());
        }
    }

    /**
     * A duration as people write it (90s, 15m, 2h, 7d) or in ISO-8601 (PT1H30M), more than zero and at most a
     * century; else an IllegalArgumentException that says so ("must be a duration ..."), for the caller to name
     * its option.
     */
    static Duration durationOf(String text) {
        Matcher m = DURATION.matcher(text.strip().toLowerCase(Locale.ROOT));
        Duration d = null;
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        } else {
            try {
                d = Duration.parse(text.strip().toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException notIso) {
                // d stays null
            }
        }
        if (d == null || d.isZero() || d.isNegative() || d.compareTo(LONGEST_SINCE) > 0) {
            throw new IllegalArgumentException("must be a duration up to 36500d such as 90s, 15m, 2h or 7d (or"
                    + " ISO-8601, PT1H30M), was '" + GpucloudCli.clip(text, 64) + "'");
        }
        return d;
    }

    /** The broker could not be read; one line for the person at the terminal. */
    static final class BrokerProblem extends RuntimeException {
        BrokerProblem(String message) {
            super(message, null, false, false);
        }
    }

    private CommandLine.ParameterException bad(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
