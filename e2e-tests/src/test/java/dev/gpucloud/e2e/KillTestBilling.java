package dev.gpucloud.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.Topics;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * Billing's side of the fault test. billing-service folds the agent's usage.events through every fault; once
 * the load has settled and billing has caught up, what it bills must match what the scheduler made: every
 * allocation that ran billed once, for exactly the time it ran, with the minimum; nothing billed that the
 * scheduler never made; and no job paying a second minimum for an attempt the platform lost.
 */
final class KillTestBilling {

    static final String DB = "gpucloud_billing_test";
    /** Billing's minimum per allocation; the test starts billing with it, so the two cannot disagree. */
    static final long MINIMUM_SECONDS = 60;

    private KillTestBilling() {
    }

    /**
     * An allocation as the scheduler made it, times in epoch microseconds: {@code startedAt} 0 if it never
     * started, {@code endedAt} Long.MAX_VALUE while it is active.
     */
    record Made(String id, String jobId, String tenant, int attempt, int rank, int units, long createdAt,
            long startedAt, long endedAt, Integer exitCode) {
    }

    /**
     * An allocation as billing holds it: the dimensions of its first report, and its usage (the union of its
     * reports) as its first start, last end and total length, in epoch microseconds.
     */
    record Billed(String id, String jobId, String tenant, int units, long from, long to, long usedMicros) {

        /**
         * Billed seconds per the policy (docs/billing.md): rounded up, at least the minimum on a job's first attempt
         * (a rerun pays no second one), times the units.
         */
        long skuSeconds() {
            long seconds = (usedMicros + 999_999) / 1_000_000;
            boolean rerun = dev.gpucloud.contracts.events.AllocationIds.attempt(jobId, id) > 1;
            return (rerun ? seconds : Math.max(MINIMUM_SECONDS, seconds)) * units;
        }
    }

    // ---------------------------------------------------------------- reading both sides

    /** Every allocation in the scheduler's tables, by id. */
    static Map<String, Made> made(Connection scheduler) throws SQLException {
        Map<String, Made> made = new TreeMap<>();
        try (Statement st = scheduler.createStatement(); ResultSet rs = st.executeQuery(
                "select a.id, a.job_id, j.tenant, a.attempt, a.rank, a.gpu_indices, a.mig_profile, a.created_at,"
                        + " a.started_at, a.ended_at, a.exit_code from allocations a join jobs j on j.id = a.job_id")) {
            while (rs.next()) {
                // one unit per GPU held, or one MIG slice: what the agent reports (GpuLedger.Claim)
                int units = rs.getString("mig_profile") != null ? 1 : rs.getString("gpu_indices").split(",").length;
                Timestamp ended = rs.getTimestamp("ended_at");
                made.put(rs.getString("id"), new Made(rs.getString("id"), rs.getString("job_id"),
                        rs.getString("tenant"), rs.getInt("attempt"), rs.getInt("rank"), units,
                        micros(rs.getTimestamp("created_at")), micros(rs.getTimestamp("started_at")),
                        ended == null ? Long.MAX_VALUE : micros(ended), (Integer) rs.getObject("exit_code")));
            }
        }
        return made;
    }

    /** Every allocation billing holds, with its usage union, by id. */
    static Map<String, Billed> billed(Connection billing) throws SQLException {
        Map<String, Billed> billed = new TreeMap<>();
        try (Statement st = billing.createStatement(); ResultSet rs = st.executeQuery(
                "select a.allocation_id, a.job_id, a.tenant, a.units, min(i.from_ts) as first_from,"
                        + " max(i.to_ts) as last_to,"
                        + " coalesce(sum(extract(epoch from i.to_ts - i.from_ts) * 1000000), 0)::bigint as used"
                        + " from allocation a left join allocation_interval i on i.allocation_id = a.allocation_id"
                        + " group by a.allocation_id, a.job_id, a.tenant, a.units")) {
            while (rs.next()) {
                billed.put(rs.getString(1), new Billed(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
                        micros(rs.getTimestamp(5)), micros(rs.getTimestamp(6)), rs.getLong(7)));
            }
        }
        return billed;
    }

    /** SKU-seconds per job on the invoices billing serves (every month it lists), for each tenant it bills. */
    static Map<String, Long> invoicedSeconds(int port, Set<String> tenants) throws Exception {
        Map<String, Long> seconds = new TreeMap<>();
        for (String tenant : tenants) {
            for (JsonNode month : get(port, "/invoices/" + tenant, tenant).path("months")) {
                for (JsonNode line : get(port, "/invoices/" + tenant + "/" + month.asText(), tenant).path("lines")) {
                    seconds.merge(line.path("jobId").asText(), line.path("seconds").asLong(), Long::sum);
                }
            }
        }
        return seconds;
    }

    private static JsonNode get(int port, String path, String tenant) throws Exception {
        HttpResponse<String> r = SchedulerKillIT.HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                + path)).header("Authorization", "Bearer " + SchedulerKillIT.TOKEN).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("billing GET " + path + ": " + r.statusCode() + " " + r.body());
        }
        return EventCodec.mapper().readTree(r.body());
    }

    /**
     * Waits until billing has stored usage.events up to the end of every partition and the ends stayed put
     * for a poll (the agent had nothing left to send); false if that did not happen within {@code atMost}.
     */
    static boolean caughtUp(String bootstrap, Connection billing, Duration atMost) throws Exception {
        long deadline = System.nanoTime() + atMost.toNanos();
        String topic = Topics.USAGE_EVENTS.name();
        Map<Integer, Long> ends = Map.of();
        Map<Integer, Long> stored = Map.of();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            while (System.nanoTime() < deadline) {
                Map<Integer, Long> before = ends;
                ends = ends(admin, topic);
                stored = new TreeMap<>();
                try (Statement st = billing.createStatement(); ResultSet rs = st.executeQuery(
                        "select kafka_partition, next_offset from fold_offset where topic = '" + topic + "'")) {
                    while (rs.next()) {
                        stored.put(rs.getInt(1), rs.getLong(2));
                    }
                }
                Map<Integer, Long> folded = stored;
                if (ends.equals(before) && ends.entrySet().stream()
                        .allMatch(e -> e.getValue().equals(folded.getOrDefault(e.getKey(), 0L)))) {
                    SchedulerKillIT.log("billing caught up: usage.events ends " + ends + ", all stored");
                    return true;
                }
                SchedulerKillIT.sleep(2000);
            }
        }
        SchedulerKillIT.log("billing did not catch up in " + atMost.toSeconds() + " s: usage.events ends " + ends
                + ", stored " + stored);
        return false;
    }

    private static Map<Integer, Long> ends(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic).partitions()
                .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        Map<Integer, Long> ends = new TreeMap<>();
        admin.listOffsets(latest).all().get(20, TimeUnit.SECONDS).forEach((p, info) -> ends.put(p.partition(), info.offset()));
        return ends;
    }

    // ---------------------------------------------------------------- the invariants

    /**
     * What billing holds must be what the scheduler made and the agent ran. Every billed allocation was made
     * by the scheduler, for the same job, tenant and units, and its usage lies within its life (creation to
     * end); every allocation that started is billed; one that exited 0 is billed for exactly as long as its
     * command runs ({@code runMicros} by job, where known), any other for no longer. No job is billed for
     * allocations of two attempts (a rerun after a fault would charge a second minimum) or twice for one
     * worker of an attempt.
     */
    static void checkBilledAsMade(Map<String, Made> made, Map<String, Billed> billed, Map<String, Long> runMicros,
            List<String> violations) {
        Map<String, Set<Integer>> attemptsByJob = new TreeMap<>();
        Map<String, List<String>> byWorker = new TreeMap<>();
        billed.values().forEach(b -> {
            Made m = made.get(b.id());
            if (m == null) {
                violations.add("billed for an allocation the scheduler never made: " + b.id() + " (job " + b.jobId()
                        + " of " + b.tenant() + ", " + b.units() + " unit(s))");
                return;
            }
            if (!m.jobId().equals(b.jobId()) || !m.tenant().equals(b.tenant()) || m.units() != b.units()) {
                violations.add("allocation " + b.id() + " is billed to job " + b.jobId() + " of " + b.tenant() + " for "
                        + b.units() + " unit(s); the scheduler made it for job " + m.jobId() + " of " + m.tenant()
                        + " with " + m.units());
            }
            if (b.from() < m.createdAt() || b.to() > m.endedAt()) {
                violations.add("allocation " + b.id() + " of job " + b.jobId() + " is billed for usage from "
                        + instant(b.from()) + " to " + instant(b.to()) + ", outside its life from " + instant(m.createdAt())
                        + " to " + (m.endedAt() == Long.MAX_VALUE ? "now" : instant(m.endedAt())));
            }
            Long run = runMicros.get(m.jobId());
            if (run != null && (Integer.valueOf(0).equals(m.exitCode()) ? b.usedMicros() != run : b.usedMicros() > run)) {
                violations.add("allocation " + b.id() + " of job " + b.jobId() + " (exit " + m.exitCode() + ") is billed for "
                        + seconds(b.usedMicros()) + " s of usage; its command runs " + seconds(run) + " s");
            }
            attemptsByJob.computeIfAbsent(m.jobId(), k -> new TreeSet<>()).add(m.attempt());
            byWorker.computeIfAbsent(m.jobId() + " attempt " + m.attempt() + " rank " + m.rank(), k -> new ArrayList<>())
                    .add(b.id());
        });
        made.values().stream().filter(m -> m.startedAt() != 0 && !billed.containsKey(m.id())).forEach(m -> violations.add(
                "unbilled: allocation " + m.id() + " of job " + m.jobId() + " started at " + instant(m.startedAt())
                        + ", but billing has no usage of it"));
        attemptsByJob.forEach((job, attempts) -> {
            if (attempts.size() > 1) {
                violations.add("second minimum: job " + job + " is billed for allocations of attempts " + attempts);
            }
        });
        byWorker.forEach((worker, ids) -> {
            if (ids.size() > 1) {
                violations.add("billed twice: job " + worker + " is billed as allocations " + ids);
            }
        });
    }

    /**
     * The invoices bill each job what its allocations come to under the policy: per allocation, its usage
     * rounded up to the second, at least the minimum, times its units.
     */
    static void checkInvoiced(Map<String, Billed> billed, Map<String, Long> invoicedByJob, List<String> violations) {
        Map<String, Long> expected = new TreeMap<>();
        billed.values().forEach(b -> expected.merge(b.jobId(), b.skuSeconds(), Long::sum));
        Set<String> jobs = new TreeSet<>(expected.keySet());
        jobs.addAll(invoicedByJob.keySet());
        for (String job : jobs) {
            long want = expected.getOrDefault(job, 0L);
            long got = invoicedByJob.getOrDefault(job, 0L);
            if (want != got) {
                violations.add("job " + job + " is invoiced " + got + " SKU-seconds; its allocations come to " + want
                        + " (" + billed.values().stream().filter(b -> b.jobId().equals(job))
                                .map(b -> b.id() + ": " + seconds(b.usedMicros()) + " s x " + b.units())
                                .collect(Collectors.joining(", ")) + ")");
            }
        }
    }

    private static long micros(Timestamp t) {
        return t == null ? 0 : ChronoUnit.MICROS.between(Instant.EPOCH, t.toInstant());
    }

    private static Instant instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }

    private static String seconds(long micros) {
        return java.math.BigDecimal.valueOf(micros, 6).stripTrailingZeros().toPlainString();
    }
}
