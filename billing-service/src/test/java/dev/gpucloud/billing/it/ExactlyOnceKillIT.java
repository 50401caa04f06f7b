package dev.gpucloud.billing.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.TestIssuer;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Exactly once, proven by kill -9: the packaged service (target/quarkus-app/quarkus-run.jar) folds a known
 * workload with duplicates (redeliveries under the same ce_id, and the same time reported under new ids),
 * overlaps, gaps and reordering, while this test kills it with SIGKILL at seeded random points and restarts
 * it. At the end every invoice line of every tenant and month must equal the ground truth this test computes
 * on its own (sort-and-sweep union, 60 s minimum, rates and half-even rounding written out here), to the
 * SKU-second and the micro-USD.
 *
 * <p>Isolation on the shared broker and database: a private topic (created and deleted here) read by a
 * fresh consumer group, and tenants no other run uses, in the billing test database.
 */
class ExactlyOnceKillIT {

    private static final String BOOTSTRAP = env("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092");
    private static final String PG = env("PGHOST", "localhost") + ":" + env("PGPORT", "5432");
    private static final String DB = "gpucloud_billing_test";
    private static final String USER = env("GPUCLOUD_DB_USER", "gpucloud");
    private static final String PASSWORD = env("GPUCLOUD_DB_PASSWORD", "gpucloud");
    private static final long SEED = Long.getLong("gpucloud.kill.seed", 20250601L);
    private static final int KILLS = Integer.getInteger("gpucloud.kill.count", 4);
    private static final Path JAR = Path.of("target/quarkus-app/quarkus-run.jar");
    private static final Instant BASE = Instant.parse("2025-03-31T21:00:00Z"); // some allocations cross into April

    /** SKUs with their rate per SKU-hour in micro-USD, worked out by hand from docs/billing.md. */
    private record Priced(Sku sku, CapacityType type, long microsPerHour) {
    }

    private static final List<Priced> SKUS = List.of(
            new Priced(Sku.wholeGpu(GpuModels.A100_SXM4_40GB), CapacityType.ON_DEMAND, 2_745_000),
            new Priced(new Sku(GpuModels.H100_SXM5_80GB, "1g.10gb", 1000), CapacityType.ON_DEMAND, 982_857),
            new Priced(new Sku(GpuModels.A10G, null, 250), CapacityType.ON_DEMAND, 251_500),
            new Priced(Sku.wholeGpu(GpuModels.V100_SXM2_16GB), CapacityType.SPOT, 930_000),
            new Priced(Sku.wholeGpu(GpuModels.V100_SXM2_16GB), CapacityType.RESERVED, 1_840_000));

    private record Alloc(String id, String tenant, String job, Priced priced, int units) {
    }

    private record Report(Alloc alloc, Instant from, Instant to, CloudEvent event) {
    }

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final String topic = "usage.events.kill-it-" + run;
    private Process service;
    private Path log;

    @AfterEach
    void cleanUp() throws Exception {
        if (service != null && service.isAlive()) {
            service.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP))) {
            admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void invoices_are_exact_after_repeated_kill_minus_9() throws Exception {
        assertThat(JAR).as("the packaged service (mvn package first)").exists();
        Random random = new Random(SEED);
        List<Alloc> allocations = allocations(random);
        List<Report> reports = workload(random, allocations);
        List<Report> sent = withDuplicatesShuffled(random, reports);
        long distinctEvents = sent.stream().map(r -> r.event().id()).distinct().count();

        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        int port = freePort();
        log = Files.createTempFile("billing-kill-it-", ".log");
        System.out.printf("kill -9 test: seed %d, %d allocations, %d reports sent (%d distinct events), topic %s, "
                + "service log %s%n", SEED, allocations.size(), sent.size(), distinctEvents, topic, log);

        // the records go out in KILLS + 1 parts, one per life of the service: each part is sent (paced over
        // about a second and a half) right after the service is ready, and the service is killed at a random
        // point 1.5..4 s later (its partitions are assigned about a second after it is ready), while that part
        // is being folded and snapshotted
        AtomicInteger produced = new AtomicInteger();
        int parts = KILLS + 1;
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new ByteArraySerializer())) {
            service = start(port);
            for (int part = 0; part < parts; part++) {
                awaitReady(port, Duration.ofSeconds(90));
                List<Report> slice = sent.subList(part * sent.size() / parts, (part + 1) * sent.size() / parts);
                Thread sender = new Thread(() -> produce(producer, slice, produced), "kill-it-producer");
                sender.start();
                if (part == parts - 1) {
                    sender.join();
                    break;
                }
                Thread.sleep(1500 + random.nextInt(2500));
                long folded = foldedRecords();
                kill9(service);
                System.out.printf("kill -9 #%d after %d records folded and stored, %d of %d records produced%n",
                        part + 1, folded, produced.get(), sent.size());
                sender.join();
                service = start(port);
            }
        }
        awaitReady(port, Duration.ofSeconds(60));
        awaitAllFolded(Duration.ofSeconds(60));

        Map<String, Map<String, long[]>> truth = groundTruth(reports, allocations);
        int lines = compareInvoices(port, allocations, truth);
        System.out.printf("kill -9 test: %d invoice lines equal the ground truth after %d kills%n", lines, KILLS);
        assertThat(lines).isGreaterThan(10);

        // A restart resumes from the offsets stored with the usage, not from the group's: rewound to 0 while the
        // service is down, they would redeliver everything; the service seeks past it and the invoices stay.
        kill9(service);
        String group = "billing-kill-it-" + run;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP))) {
            admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(List.of(
                    new MemberToRemove(group)))).all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> zero = new HashMap<>();
            for (int p = 0; p < 3; p++) {
                zero.put(new TopicPartition(topic, p), new OffsetAndMetadata(0));
            }
            admin.alterConsumerGroupOffsets(group, zero).all().get(30, TimeUnit.SECONDS);
            service = start(port);
            awaitReady(port, Duration.ofSeconds(90));
            Map<Integer, Long> ends = endOffsets();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Map<Integer, Long> committed = Map.of();
            while (System.nanoTime() < deadline) {
                committed = new HashMap<>();
                for (var e : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10,
                        TimeUnit.SECONDS).entrySet()) {
                    committed.put(e.getKey().partition(), e.getValue() == null ? 0 : e.getValue().offset());
                }
                if (committed.equals(ends)) {
                    break;
                }
                Thread.sleep(200);
            }
            assertThat(committed).as("the group's offsets, rewound to 0, follow the stored ones again").isEqualTo(ends);
        }
        assertThat(storedOffsets()).as("stored offsets after the restart").isEqualTo(endOffsets());
        assertThat(compareInvoices(port, allocations, truth)).as("invoice lines after the restart").isEqualTo(lines);
        System.out.printf("kill -9 test: after the group's offsets were rewound to 0 and the service restarted, it "
                + "resumed at the stored offsets %s and the %d invoice lines are unchanged%n", storedOffsets(), lines);
    }

    private int compareInvoices(int port, List<Alloc> allocations, Map<String, Map<String, long[]>> truth)
            throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        int lines = 0;
        for (String tenant : tenants(allocations)) {
            for (YearMonth month : List.of(YearMonth.of(2025, 3), YearMonth.of(2025, 4))) {
                JsonNode invoice = EventCodec.mapper().readTree(http.send(HttpRequest.newBuilder(
                                URI.create("http://localhost:" + port + "/invoices/" + tenant + "/" + month))
                        .header("Authorization", "Bearer " + TestIssuer.token("kill-it", List.of(tenant),
                                List.of("member"))).build(), HttpResponse.BodyHandlers.ofString()).body());
                Map<String, long[]> expected = truth.getOrDefault(tenant + " " + month, Map.of());
                Map<String, long[]> actual = new TreeMap<>();
                for (JsonNode line : invoice.get("lines")) {
                    actual.put(line.get("jobId").asText() + " " + line.get("sku").asText() + " "
                                    + line.get("capacityType").asText(),
                            new long[] {line.get("seconds").asLong(), line.get("amountMicros").asLong()});
                }
                assertThat(actual.keySet()).as("lines of %s %s", tenant, month).isEqualTo(expected.keySet());
                for (var entry : expected.entrySet()) {
                    assertThat(actual.get(entry.getKey())).as("%s %s %s: [SKU-seconds, micro-USD]", tenant, month,
                            entry.getKey()).containsExactly(entry.getValue());
                    lines++;
                }
            }
        }
        return lines;
    }

    /** Every record on the topic is folded and stored: the stored next offsets are the partitions' ends. */
    private void awaitAllFolded(Duration patience) throws Exception {
        Map<Integer, Long> ends = endOffsets();
        long deadline = System.nanoTime() + patience.toNanos();
        while (!storedOffsets().equals(ends) && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }
        assertThat(storedOffsets()).as("every record folded once: stored next offsets = end offsets").isEqualTo(ends);
    }

    // --- the workload ------------------------------------------------------------------------------------

    private List<Alloc> allocations(Random random) {
        List<Alloc> allocations = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            String tenant = "kill-" + run + "-" + t;
            for (int a = 0; a < 12; a++) {
                allocations.add(new Alloc("alloc-" + run + "-" + t + "-" + a, tenant, "job-" + (a % 4),
                        SKUS.get(random.nextInt(SKUS.size())), 1 + random.nextInt(3)));
            }
        }
        return allocations;
    }

    /**
     * Per allocation, a run of ticks (1..60 s, with milliseconds) from a random start, some skipped (gaps), plus
     * reports that overlap what was reported (a random stretch re-reported under a new id).
     */
    private static List<Report> workload(Random random, List<Alloc> allocations) {
        List<Report> reports = new ArrayList<>();
        for (Alloc alloc : allocations) {
            Instant at = BASE.plusSeconds(random.nextInt(3 * 3600)).plusMillis(random.nextInt(1000));
            int ticks = 150 + random.nextInt(150);
            List<Report> own = new ArrayList<>();
            for (int i = 0; i < ticks; i++) {
                Instant to = at.plusMillis(1000 + random.nextInt(59_000));
                if (random.nextInt(20) != 0) { // one tick in 20 is never reported: a gap, not billed
                    own.add(report(alloc, at, to));
                }
                at = to;
            }
            int overlaps = own.size() / 10;
            for (int i = 0; i < overlaps; i++) {
                Report a = own.get(random.nextInt(own.size()));
                Report b = own.get(random.nextInt(own.size()));
                Instant from = a.from().isBefore(b.from()) ? a.from() : b.from();
                Instant to = a.to().isAfter(b.to()) ? a.to() : b.to();
                if (Duration.between(from, to).toHours() < 20) {
                    own.add(report(alloc, from.plusMillis(random.nextInt(500)), to));
                }
            }
            reports.addAll(own);
        }
        return reports;
    }

    private static Report report(Alloc alloc, Instant from, Instant to) {
        return new Report(alloc, from, to, CloudEvent.create(Topics.USAGE_EVENTS.eventType(), "kill-it", Instant.now()));
    }

    /** Every report once, one in eight twice more under its own ce_id (a producer retry), all shuffled. */
    private static List<Report> withDuplicatesShuffled(Random random, List<Report> reports) {
        List<Report> sent = new ArrayList<>(reports);
        for (Report report : reports) {
            if (random.nextInt(8) == 0) {
                sent.add(report);
                sent.add(report);
            }
        }
        Collections.shuffle(sent, random);
        return sent;
    }

    private void produce(KafkaProducer<String, byte[]> producer, List<Report> slice, AtomicInteger produced) {
        try {
            int step = Math.max(1, slice.size() / 150);
            for (int i = 0; i < slice.size(); i++) {
                Report r = slice.get(i);
                UsageEvent usage = new UsageEvent(r.alloc().id(), r.alloc().job(), r.alloc().tenant(), "node-kill-it",
                        r.from(), r.to(), r.alloc().priced().sku(), r.alloc().units(), r.alloc().priced().type(),
                        "us-east-1a");
                ProducerRecord<String, byte[]> record = EventRecords.record(Topics.USAGE_EVENTS, r.alloc().id(), usage,
                        r.event());
                producer.send(new ProducerRecord<>(topic, null, record.key(), record.value(), record.headers()));
                produced.incrementAndGet();
                if (i % step == 0) {
                    Thread.sleep(10);
                }
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // --- the ground truth, computed here without the service's code ----------------------------------

    /** "tenant month" to "job sku capacity" to {SKU-seconds, micro-USD}. */
    private static Map<String, Map<String, long[]>> groundTruth(List<Report> reports, List<Alloc> allocations) {
        Map<String, List<long[]>> byAlloc = new TreeMap<>();
        for (Report r : reports) {
            byAlloc.computeIfAbsent(r.alloc().id(), ignored -> new ArrayList<>())
                    .add(new long[] {micros(r.from()), micros(r.to())});
        }
        Map<String, Map<String, long[]>> seconds = new TreeMap<>();
        long aprilStart = micros(Instant.parse("2025-04-01T00:00:00Z"));
        for (Alloc alloc : allocations) {
            List<long[]> union = union(byAlloc.getOrDefault(alloc.id(), List.of()));
            long march = billed(usedBefore(union, aprilStart));
            long all = billed(usedBefore(union, Long.MAX_VALUE));
            String key = alloc.job() + " " + alloc.priced().sku().code() + " " + alloc.priced().type();
            add(seconds, alloc.tenant() + " 2025-03", key, march * alloc.units(), alloc.priced());
            add(seconds, alloc.tenant() + " 2025-04", key, (all - march) * alloc.units(), alloc.priced());
        }
        // a line's amount: SKU-seconds x rate / 3600, rounded half-even to the micro-USD once
        seconds.values().forEach(lines -> lines.values().forEach(f -> f[1] = BigDecimal.valueOf(f[0])
                .multiply(BigDecimal.valueOf(f[2])).divide(BigDecimal.valueOf(3600), 0, RoundingMode.HALF_EVEN)
                .longValueExact()));
        Map<String, Map<String, long[]>> truth = new TreeMap<>();
        seconds.forEach((month, lines) -> lines.forEach((key, f) -> {
            if (f[0] > 0) {
                truth.computeIfAbsent(month, ignored -> new TreeMap<>()).put(key, new long[] {f[0], f[1]});
            }
        }));
        return truth;
    }

    private static void add(Map<String, Map<String, long[]>> seconds, String month, String key, long s, Priced p) {
        long[] f = seconds.computeIfAbsent(month, ignored -> new TreeMap<>()).computeIfAbsent(key,
                ignored -> new long[] {0, 0, p.microsPerHour()});
        f[0] += s;
    }

    /** Sort by start, sweep, merge overlapping or touching intervals. */
    private static List<long[]> union(List<long[]> intervals) {
        List<long[]> sorted = new ArrayList<>(intervals);
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> merged = new ArrayList<>();
        for (long[] i : sorted) {
            if (!merged.isEmpty() && i[0] <= merged.get(merged.size() - 1)[1]) {
                long[] last = merged.get(merged.size() - 1);
                last[1] = Math.max(last[1], i[1]);
            } else {
                merged.add(new long[] {i[0], i[1]});
            }
        }
        return merged;
    }

    private static long usedBefore(List<long[]> union, long end) {
        long used = 0;
        for (long[] i : union) {
            used += Math.max(0, Math.min(i[1], end) - i[0]);
        }
        return used;
    }

    /** Whole seconds, rounded up, at least 60; nothing for no usage. */
    private static long billed(long usedMicros) {
        return usedMicros == 0 ? 0 : Math.max(60, (usedMicros + 999_999) / 1_000_000);
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    // --- the service as a child process ----------------------------------------------------------------

    private Process start(int port) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-XX:TieredStopAtLevel=1",
                "-Dquarkus.http.port=" + port,
                // authentication stays on, as shipped: against a real issuer found through discovery
                "-Dquarkus.oidc.auth-server-url=" + TestIssuer.issuer().issuer(),
                "-Dmp.messaging.incoming.usage-in.topic=" + topic,
                "-Dmp.messaging.incoming.usage-in.group.id=billing-kill-it-" + run,
                // static membership: a restarted instance takes its partitions back at once, instead of waiting
                // for the killed one's session to time out
                "-Dmp.messaging.incoming.usage-in.group.instance.id=billing-kill-it-" + run,
                "-Dmp.messaging.incoming.usage-in.session.timeout.ms=10000",
                "-Dgpucloud.billing.close-grace=P36500D", // March 2025 stays open: this test is about the fold
                // many snapshots per life, so the kills land between them, with usage folded but not yet written
                "-Dgpucloud.billing.fold.snapshot-interval=PT0.25S",
                "-Dmp.messaging.incoming.usage-in.max.poll.records=2000",
                "-jar", JAR.toString());
        Map<String, String> env = builder.environment();
        env.put("KAFKA_BOOTSTRAP_SERVERS", BOOTSTRAP);
        env.put("GPUCLOUD_BILLING_DB", DB);
        builder.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        return builder.start();
    }

    private static void kill9(Process process) throws Exception {
        new ProcessBuilder("kill", "-9", String.valueOf(process.pid())).inheritIO().start().waitFor();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("the service died").isTrue();
        assertThat(process.exitValue()).as("killed by SIGKILL").isEqualTo(137);
    }

    private void awaitReady(int port, Duration patience) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + patience.toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(service.isAlive()).as("the service is running (log %s)", log).isTrue();
            try {
                if (http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/q/health/ready"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the service was not ready within " + patience + " (log " + log + ")");
    }

    /** Partition to the next offset stored with the folded usage (table fold_offset). */
    private Map<Integer, Long> storedOffsets() throws Exception {
        Map<Integer, Long> stored = new TreeMap<>();
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + PG + "/" + DB, USER, PASSWORD);
                PreparedStatement s = c.prepareStatement(
                        "SELECT kafka_partition, next_offset FROM fold_offset WHERE topic = ?")) {
            s.setString(1, topic);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    stored.put(rs.getInt(1), rs.getLong(2));
                }
            }
        }
        return stored;
    }

    private long foldedRecords() throws Exception {
        return storedOffsets().values().stream().mapToLong(Long::longValue).sum();
    }

    private Map<Integer, Long> endOffsets() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP))) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < 3; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            Map<Integer, Long> ends = new TreeMap<>();
            admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS)
                    .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
            return ends;
        }
    }

    private static Set<String> tenants(List<Alloc> allocations) {
        return new java.util.TreeSet<>(allocations.stream().map(Alloc::tenant).toList());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
