package dev.gpucloud.bench;

import dev.gpucloud.contracts.events.AllocationEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topic;
import dev.gpucloud.contracts.events.Topics;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * What a scheduler restart did to one tenant's running jobs, read after the fact: from the scheduler's
 * tables (job states and attempts now, allocations that ended since the kill) and from the topics
 * since the kill (the node commands the scheduler sent, the job and allocation events). A job counts
 * as disturbed when it is no longer RUNNING, was placed again (attempt above 1), lost or ended an
 * allocation since the kill, or was sent a STOP since the kill.
 */
record RestartAftermath(int jobs, Map<String, Integer> jobStates, int replaced, Map<String, Integer> endedAllocations,
        int refusedStarts, Map<String, Integer> commands, Map<String, Integer> commandsToTenant,
        Map<String, Integer> jobEvents, Map<String, Integer> allocationEvents, Set<String> disturbed) {

    /** Exit code of an allocation its agent could not start (or refused): ProcessRunner/SimulatedFleet's. */
    static final int EXIT_CANNOT_START = 125;

    /** Reads the aftermath of the kill at {@code killMillis} (wall clock) for {@code tenant}'s jobs. */
    static RestartAftermath read(Connection db, String bootstrap, String tenant, long killMillis) throws SQLException {
        Map<String, Integer> states = new TreeMap<>();
        Set<String> ids = new HashSet<>();
        Set<String> disturbed = new HashSet<>();
        int replaced = 0;
        try (PreparedStatement q = db.prepareStatement("select id, state, attempt from jobs where tenant = ?")) {
            q.setString(1, tenant);
            try (ResultSet r = q.executeQuery()) {
                while (r.next()) {
                    String id = r.getString(1);
                    String state = r.getString(2);
                    ids.add(id);
                    states.merge(state, 1, Integer::sum);
                    boolean again = r.getInt(3) > 1;
                    if (again) {
                        replaced++;
                    }
                    if (again || !"RUNNING".equals(state)) {
                        disturbed.add(id);
                    }
                }
            }
        }
        Map<String, Integer> ended = new TreeMap<>();
        int refused = 0;
        try (PreparedStatement q = db.prepareStatement("select a.job_id, a.state, a.exit_code from allocations a"
                + " join jobs j on j.id = a.job_id where j.tenant = ? and a.ended_at >= ?")) {
            q.setString(1, tenant);
            q.setTimestamp(2, new Timestamp(killMillis));
            try (ResultSet r = q.executeQuery()) {
                while (r.next()) {
                    Integer exit = (Integer) r.getObject(3);
                    ended.merge(r.getString(2) + (exit == null ? "" : " exit " + exit), 1, Integer::sum);
                    if (exit != null && exit == EXIT_CANNOT_START) {
                        refused++;
                    }
                    disturbed.add(r.getString(1));
                }
            }
        }
        Map<String, Integer> commands = new TreeMap<>();
        Map<String, Integer> toTenant = new TreeMap<>();
        Map<String, Integer> jobEvents = new TreeMap<>();
        Map<String, Integer> allocationEvents = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> consumer = consumer(bootstrap)) {
            readSince(consumer, Topics.NODE_COMMANDS, killMillis, (NodeCommand c) -> {
                commands.merge(c.type().name(), 1, Integer::sum);
                if (tenant.equals(c.tenant())) {
                    toTenant.merge(c.type().name(), 1, Integer::sum);
                    if (c.type() == NodeCommandType.STOP) {
                        disturbed.add(c.jobId());
                    }
                }
            });
            readSince(consumer, Topics.JOB_EVENTS, killMillis, (JobEvent e) -> {
                if (tenant.equals(e.tenant())) {
                    jobEvents.merge(e.state().name(), 1, Integer::sum);
                }
            });
            readSince(consumer, Topics.ALLOCATION_EVENTS, killMillis, (AllocationEvent e) -> {
                if (ids.contains(e.jobId())) {
                    allocationEvents.merge(e.type().name(), 1, Integer::sum);
                }
            });
        }
        return new RestartAftermath(ids.size(), states, replaced, ended, refused, commands, toTenant, jobEvents,
                allocationEvents, disturbed);
    }

    /** Counts of a map as "A 3, B 1", or "none". */
    static String counts(Map<String, Integer> m) {
        if (m.isEmpty()) {
            return "none";
        }
        List<String> parts = new ArrayList<>();
        m.forEach((k, v) -> parts.add(k + " " + v));
        return String.join(", ", parts);
    }

    private static KafkaConsumer<String, byte[]> consumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    }

    /** Hands {@code sink} every readable record of {@code topic} written at or after {@code sinceMillis}, up to now. */
    private static <T> void readSince(KafkaConsumer<String, byte[]> consumer, Topic<T> topic, long sinceMillis,
            Consumer<T> sink) {
        List<TopicPartition> parts = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic.name(), Duration.ofSeconds(30))) {
            parts.add(new TopicPartition(topic.name(), info.partition()));
        }
        consumer.assign(parts);
        Map<TopicPartition, Long> query = new HashMap<>();
        parts.forEach(tp -> query.put(tp, sinceMillis));
        Map<TopicPartition, OffsetAndTimestamp> from = consumer.offsetsForTimes(query, Duration.ofSeconds(30));
        Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(30));
        Map<TopicPartition, Long> todo = new HashMap<>();
        for (TopicPartition tp : parts) {
            OffsetAndTimestamp at = from.get(tp);
            if (at != null && at.offset() < end.get(tp)) {
                consumer.seek(tp, at.offset());
                todo.put(tp, end.get(tp));
            }
        }
        consumer.assign(List.copyOf(todo.keySet()));
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!todo.isEmpty() && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                Long last = todo.get(tp);
                if (last == null || r.offset() >= last || r.value() == null) {
                    continue;
                }
                try {
                    sink.accept(EventCodec.decode(topic, r.value()));
                } catch (RuntimeException e) {
                    // a record of another producer that does not decode: not ours to count
                }
            }
            todo.keySet().removeIf(tp -> consumer.position(tp) >= todo.get(tp));
        }
        if (!todo.isEmpty()) {
            System.err.println("warning: " + topic.name() + " was not read to its end in 2 minutes: " + todo.keySet());
        }
    }
}
