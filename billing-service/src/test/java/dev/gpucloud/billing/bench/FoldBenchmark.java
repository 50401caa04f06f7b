package dev.gpucloud.billing.bench;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.CloudEvent;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.Sku;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.events.UsageEvent;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.TestIssuer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The billing fold's throughput, exactly once into PostgreSQL: produces N usage events (A allocations
 * reporting 10 s ticks, keyed by allocation) to a fresh topic, measures Kafka's own consumer perf tool on that
 * topic, then starts the packaged service (target/quarkus-app/quarkus-run.jar) on it with a fresh consumer
 * group and measures how fast the committed offsets (committed only after the snapshot transaction) reach N,
 * while a client reads invoices of the benchmark tenants in a loop (latency p50/p99). Cleans up its topic and
 * rows afterwards. Run from billing-service/ (docs/benchmarks.md, section billing).
 *
 * <p>Arguments: N (default 500000), allocations (default 5000), partitions (default 3).
 */
public final class FoldBenchmark {

    private static final String BOOTSTRAP = env("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092");
    private static final String DB = env("GPUCLOUD_BILLING_DB", "gpucloud_billing_test");
    private static final String JDBC = "jdbc:postgresql://" + env("PGHOST", "localhost") + ":" + env("PGPORT", "5432")
            + "/" + DB;
    private static final Instant BASE = Instant.parse("2025-03-01T00:00:00Z");

    private FoldBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
        int allocations = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        int partitions = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String run = UUID.randomUUID().toString().substring(0, 8);
        String topic = "usage.events.bench-" + run;
        String group = "billing-bench-" + run;
        System.out.printf("billing fold benchmark: %,d events, %,d allocations, %d partitions, topic %s, database %s%n",
                n, allocations, partitions, topic, DB);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Process service = null;
            try {
                produce(topic, run, n, allocations);
                consumerPerfTest(topic, n, run);
                int port = freePort();
                Path log = Files.createTempFile("billing-bench-", ".log");
                long started = System.nanoTime();
                service = start(port, topic, group, log);
                fold(admin, group, n, port, run, started);
                verify(topic, run, n, allocations);
                System.out.printf("service log: %s%n", log);
            } finally {
                if (service != null) {
                    service.destroy();
                    service.waitFor(20, TimeUnit.SECONDS);
                }
                admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
                cleanUp(topic, run);
            }
        }
    }

    private static void produce(String topic, String run, int n, int allocations) {
        long t0 = System.nanoTime();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BOOTSTRAP, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 262_144,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"), new StringSerializer(), new ByteArraySerializer())) {
            Sku a100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
            for (int k = 0; k < n; k++) {
                int a = k % allocations;
                int tick = k / allocations;
                String alloc = "bench-" + run + "-alloc-" + a;
                Instant from = BASE.plusSeconds(a % 3600).plusSeconds(10L * tick);
                UsageEvent usage = new UsageEvent(alloc, "job-" + (a % 100), tenant(run, a), "node-" + (a % 500), from,
                        from.plusSeconds(10), a100, 1, CapacityType.ON_DEMAND, "us-east-1a");
                ProducerRecord<String, byte[]> record = EventRecords.record(Topics.USAGE_EVENTS, alloc, usage,
                        CloudEvent.create(Topics.USAGE_EVENTS.eventType(), "fold-bench", from.plusSeconds(10)));
                producer.send(new ProducerRecord<>(topic, null, record.key(), record.value(), record.headers()));
            }
            producer.flush();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf("produced %,d events in %.1f s (%,.0f events/s)%n", n, seconds, n / seconds);
    }

    private static String tenant(String run, int allocation) {
        return "bench-" + run + "-t" + (allocation % 50);
    }

    /** Kafka's own consumer perf tool on the same topic, with its own group: the raw consumer rate. */
    private static void consumerPerfTest(String topic, int n, String run) throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        Process perf = new ProcessBuilder("bash", root.resolve("deploy/local/kafka.sh").toString(), "cli",
                "consumer-perf-test", "--bootstrap-server", BOOTSTRAP, "--topic", topic, "--messages",
                String.valueOf(n), "--group", "perf-" + run, "--timeout", "60000")
                .redirectErrorStream(true).start();
        String out = new String(perf.getInputStream().readAllBytes());
        perf.waitFor(120, TimeUnit.SECONDS);
        System.out.println("kafka consumer-perf-test (same topic, same run):");
        out.lines().filter(line -> !line.isBlank()).forEach(line -> System.out.println("  " + line));
    }

    private static void fold(Admin admin, String group, int n, int port, String run, long started) throws Exception {
        AtomicBoolean folding = new AtomicBoolean(true);
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        Thread reader = new Thread(() -> readInvoices(port, run, folding, latencies), "invoice-reader");
        reader.start();
        long first = 0;
        long firstCount = 0;
        long last = 0;
        long lastCount = 0;
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (System.nanoTime() < deadline) {
            long committed = 0;
            boolean listed = false;
            try {
                for (OffsetAndMetadata offset : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(10, TimeUnit.SECONDS).values()) {
                    committed += offset == null ? 0 : offset.offset();
                    listed = true;
                }
            } catch (Exception e) {
                // the group does not exist before the service's first commit
            }
            long now = System.nanoTime();
            // the service commits each partition's start offset when it is assigned: folding starts then
            if (listed && first == 0) {
                first = now;
                firstCount = committed;
            }
            if (committed > lastCount) {
                last = now;
                lastCount = committed;
            }
            if (committed >= n) {
                break;
            }
            Thread.sleep(100);
        }
        folding.set(false);
        reader.join(10_000);
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/q/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        metrics.body().lines().filter(line -> line.startsWith("gpucloud_billing_fold_"))
                .forEach(line -> System.out.println("  " + line));
        double steady = (last - first) / 1e9;
        System.out.printf("fold: %,d events committed (snapshot transaction, then group offsets); %,d of them between the "
                + "partitions' assignment (start offsets committed) and the last offset commit seen, in %.2f s: "
                + "%,.0f events/s; %.1f s from service start to the last commit%n", lastCount, lastCount - firstCount,
                steady, (lastCount - firstCount) / steady, (last - started) / 1e9);
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        if (!sorted.isEmpty()) {
            System.out.printf("invoice query while folding (GET /invoices/{tenant}/2025-03, one client, sequential): "
                    + "%d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", sorted.size(),
                    sorted.get(sorted.size() / 2) / 1e6, sorted.get((int) Math.min(sorted.size() - 1,
                            Math.ceil(sorted.size() * 0.99) - 1)) / 1e6, sorted.get(sorted.size() - 1) / 1e6);
        }
    }

    private static void readInvoices(int port, String run, AtomicBoolean folding, List<Long> latencies) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        int i = 0;
        while (folding.get()) {
            String tenant = tenant(run, i++);
            long t0 = System.nanoTime();
            try {
                HttpResponse<Void> response = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                                + "/invoices/" + tenant + "/2025-03")).header("Authorization", "Bearer "
                                + TestIssuer.token("bench", List.of(tenant), List.of("member")))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    latencies.add(System.nanoTime() - t0);
                }
            } catch (IOException e) {
                sleep(100); // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static Process start(int port, String topic, String group, Path log) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g", "-Dquarkus.http.port=" + port,
                "-Dquarkus.oidc.auth-server-url=" + TestIssuer.issuer().issuer(), "-Dmp.messaging.incoming.usage-in.topic=" + topic,
                "-Dmp.messaging.incoming.usage-in.group.id=" + group, "-Dgpucloud.billing.close-grace=P36500D",
                "-Dmp.messaging.incoming.usage-in.partitions=" + env("BENCH_CONSUMERS", "1")));
        // extra service options, e.g. BENCH_SERVICE_OPTS="-Dgpucloud.billing.fold.snapshot-interval=PT2S"
        for (String option : env("BENCH_SERVICE_OPTS", "").split("\\s+")) {
            if (!option.isBlank()) {
                command.add(option);
            }
        }
        command.addAll(List.of("-jar", "target/quarkus-app/quarkus-run.jar"));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("KAFKA_BOOTSTRAP_SERVERS", BOOTSTRAP);
        builder.environment().put("GPUCLOUD_BILLING_DB", DB);
        builder.redirectErrorStream(true).redirectOutput(log.toFile());
        return builder.start();
    }

    private static void cleanUp(String topic, String run) throws Exception {
        try (Connection c = DriverManager.getConnection(JDBC, env("GPUCLOUD_DB_USER", "gpucloud"),
                env("GPUCLOUD_DB_PASSWORD", "gpucloud")); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM fold_offset WHERE topic = '" + topic + "'");
            s.executeUpdate("DELETE FROM allocation_interval WHERE allocation_id LIKE 'bench-" + run + "-%'");
            s.executeUpdate("DELETE FROM allocation WHERE allocation_id LIKE 'bench-" + run + "-%'");
        }
    }

    /**
     * Exactly once, checked against the produced ground truth: the stored next offsets cover all N records, and
     * every allocation's stored usage is exactly its ticks (one interval of 10 s per tick, from its start).
     */
    private static void verify(String topic, String run, int n, int allocations) throws Exception {
        try (Connection c = DriverManager.getConnection(JDBC, env("GPUCLOUD_DB_USER", "gpucloud"),
                env("GPUCLOUD_DB_PASSWORD", "gpucloud")); Statement s = c.createStatement()) {
            long stored = 0;
            try (ResultSet rs = s.executeQuery("SELECT coalesce(sum(next_offset), 0) FROM fold_offset WHERE topic = '"
                    + topic + "'")) {
                rs.next();
                stored = rs.getLong(1);
            }
            long wrong = 0;
            long seconds = 0;
            long found = 0;
            try (ResultSet rs = s.executeQuery("SELECT allocation_id, min(from_ts) AS f, max(to_ts) AS t, count(*) AS k, "
                    + "sum(extract(epoch FROM to_ts - from_ts))::bigint AS used FROM allocation_interval "
                    + "WHERE allocation_id LIKE 'bench-" + run + "-alloc-%' GROUP BY allocation_id")) {
                while (rs.next()) {
                    found++;
                    String id = rs.getString("allocation_id");
                    int a = Integer.parseInt(id.substring(id.lastIndexOf('-') + 1));
                    long ticks = n / allocations + (a < n % allocations ? 1 : 0);
                    Instant from = BASE.plusSeconds(a % 3600);
                    boolean exact = rs.getLong("k") == 1 && rs.getLong("used") == 10 * ticks
                            && rs.getTimestamp("f").toInstant().equals(from)
                            && rs.getTimestamp("t").toInstant().equals(from.plusSeconds(10 * ticks));
                    if (!exact) {
                        wrong++;
                    }
                    seconds += rs.getLong("used");
                }
            }
            long expectedAllocations = Math.min(n, allocations);
            System.out.printf("exactly once: stored next offsets cover %,d of %,d records; %,d of %,d allocations "
                    + "stored, %,d with usage different from the produced ticks; %,d s stored of %,d s produced: %s%n",
                    stored, n, found, expectedAllocations, wrong, seconds, 10L * n,
                    stored == n && found == expectedAllocations && wrong == 0 && seconds == 10L * n ? "EXACT"
                            : "NOT EXACT");
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
