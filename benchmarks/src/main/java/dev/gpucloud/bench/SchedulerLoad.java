package dev.gpucloud.bench;

import dev.gpucloud.client.LeaderFailover;
import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.paging.NodePages;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.ManagedChannel;
import dev.gpucloud.identity.BearerToken;
import io.grpc.Grpc;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Black-box load driver for the scheduler-service: submits jobs over gRPC {@code SubmitJob} (a
 * unique client_request_id each) from several channels, at a fixed offered rate or as fast as the
 * in-flight limit allows, and follows {@code job.events} with its own Kafka consumer to see when
 * each job's SCHEDULED event (its persisted placement, published through the outbox) arrives.
 *
 * <p>{@code --target} may list several scheduler instances ("host:port,host:port"). A submission
 * turned away with UNAVAILABLE (a standby, an instance that is down) is sent again as the CLI would
 * send it ({@link LeaderFailover}'s rules: the leader its trailer names, else the next address, with
 * back-off, for at most {@code --failover-timeout} seconds), with the same client_request_id, so a
 * retry never submits twice; its latency still counts from the first send.
 *
 * <p>Prints accepted submissions/s, SCHEDULED events/s over the measurement window, the retries,
 * and the latency from SubmitJob sent to SCHEDULED received (p50, p90, p99, max). Run it through
 * {@code benchmarks/scheduler-load.sh}, which starts a private scheduler and a simulated fleet;
 * {@code --help} lists the options.
 */
public final class SchedulerLoad {

    record Options(List<String> targets, String bootstrap, String tenant, String nodePrefix, int waitHosts,
            double rate, int seconds, int warmup, int drain, int channels, int inflight, int gpus,
            int runSeconds, String label, double failoverTimeout, ProcessCpu cpu) {

        static Options parse(String[] args) {
            Map<String, String> m = new HashMap<>();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--help") || a.equals("-h")) {
                    usage(null);
                }
                if (!a.startsWith("--") || i + 1 >= args.length) {
                    usage("expected --name value pairs, got '" + a + "'");
                }
                m.put(a.substring(2), args[++i]);
            }
            List<String> targets = List.of();
            try {
                targets = LeaderFailover.parseAddresses(m.getOrDefault("target", "localhost:18181"));
            } catch (IllegalArgumentException e) {
                usage("--target: " + e.getMessage());
            }
            Options o = new Options(
                    targets,
                    m.getOrDefault("bootstrap", "localhost:9092"),
                    m.getOrDefault("tenant", "bench-" + Long.toHexString(System.nanoTime() & 0xffffff)),
                    m.getOrDefault("node-prefix", ""),
                    integer(m, "wait-hosts", 0),
                    number(m, "rate"),
                    integer(m, "seconds", 60),
                    integer(m, "warmup", 5),
                    integer(m, "drain", 20),
                    integer(m, "channels", 4),
                    integer(m, "inflight", 256),
                    integer(m, "gpus", 1),
                    integer(m, "run-seconds", 1),
                    m.getOrDefault("label", "run"),
                    number(m, "failover-timeout", LeaderFailover.DEFAULT_TIMEOUT.toSeconds()),
                    cpu(m.getOrDefault("cpu", "")));
            m.keySet().removeAll(List.of("target", "bootstrap", "tenant", "node-prefix", "wait-hosts", "rate",
                    "seconds", "warmup", "drain", "channels", "inflight", "gpus", "run-seconds", "label",
                    "failover-timeout", "cpu"));
            if (!m.isEmpty()) {
                usage("unknown option(s) " + m.keySet());
            }
            if (o.rate < 0 || o.seconds < 1 || o.warmup < 0 || o.channels < 1 || o.inflight < 1 || o.gpus < 1
                    || !(o.failoverTimeout >= 0)) {
                usage("rate >= 0, seconds >= 1, warmup >= 0, channels >= 1, inflight >= 1, gpus >= 1,"
                        + " failover-timeout >= 0");
            }
            return o;
        }

        private static double number(Map<String, String> m, String key) {
            return number(m, key, 0);
        }

        private static double number(Map<String, String> m, String key, double dflt) {
            try {
                return Double.parseDouble(m.getOrDefault(key, String.valueOf(dflt)));
            } catch (NumberFormatException e) {
                usage("--" + key + " must be a number, was '" + m.get(key) + "'");
                return 0;
            }
        }

        private static int integer(Map<String, String> m, String key, int dflt) {
            try {
                return Integer.parseInt(m.getOrDefault(key, String.valueOf(dflt)));
            } catch (NumberFormatException e) {
                usage("--" + key + " must be an integer, was '" + m.get(key) + "'");
                return dflt;
            }
        }

        private static ProcessCpu cpu(String spec) {
            try {
                return ProcessCpu.parse(spec);
            } catch (IllegalArgumentException e) {
                usage("--cpu: " + e.getMessage());
                return null;
            }
        }

        private static void usage(String error) {
            if (error != null) {
                System.err.println("error: " + error);
            }
            System.err.println("""
                    usage: SchedulerLoad [--target host:port[,host:port...]] [--bootstrap host:port] [--tenant T]
                             [--rate JOBS_PER_S (0: as fast as --inflight allows)] [--seconds N] [--warmup N]
                             [--drain N] [--channels N] [--inflight N] [--gpus N] [--run-seconds N]
                             [--node-prefix P --wait-hosts N] [--label L]
                             [--failover-timeout SECONDS (30: how long one submission may retry on UNAVAILABLE)]
                             [--cpu name=pid[+pid..],name=@command,.. (CPU per job of these processes in the window)]""");
            System.exit(error == null ? 0 : 2);
        }
    }

    /** One submission: when it was sent, when it was accepted, when its SCHEDULED event arrived. */
    static final class Sub {
        final long sentNanos;
        volatile long acceptedNanos;
        volatile long scheduledNanos;

        Sub(long sentNanos) {
            this.sentNanos = sentNanos;
        }
    }

    private final Options o;
    private final Map<String, Sub> byJob = new ConcurrentHashMap<>();
    /** SCHEDULED events that arrived before the SubmitJob answer named their job. */
    private final Map<String, Long> early = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Sub> all = new ConcurrentLinkedQueue<>();
    private final AtomicLong rejected = new AtomicLong();
    private final Map<String, AtomicLong> rejections = new ConcurrentHashMap<>();
    /** --channels channels to each scheduler instance, opened when a submission first goes there. */
    private final Map<String, List<ManagedChannel>> channelsByAddress = new ConcurrentHashMap<>();
    /** Where new submissions go: the first --target, then wherever the last move pointed. */
    private final AtomicReference<String> leader;
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong retriedSubmissions = new AtomicLong();
    private final ScheduledExecutorService retryTimer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "submit-retry");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean consuming = true;
    /** CPU used so far by the processes --cpu names, at the window's start and end (null: not read yet). */
    private volatile Map<String, ProcessCpu.Reading> cpuAtStart;
    private volatile Map<String, ProcessCpu.Reading> cpuAtEnd;

    /** When submitting began (System.nanoTime); the measurement window opens --warmup seconds later. */
    private long start;

    SchedulerLoad(Options o) {
        this.o = o;
        this.leader = new AtomicReference<>(o.targets.get(0));
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        new SchedulerLoad(Options.parse(args)).run();
    }

    void run() throws Exception {
        try {
            if (o.waitHosts > 0) {
                waitForHosts();
            }
            KafkaConsumer<String, byte[]> consumer = consumerAtEnd();
            Thread follower = new Thread(() -> follow(consumer), "job-events");
            follower.setDaemon(true);
            follower.start();
            submitAll();
            follower.join();
            report();
        } finally {
            retryTimer.shutdownNow();
            for (List<ManagedChannel> channels : channelsByAddress.values()) {
                for (ManagedChannel c : channels) {
                    c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    private static io.grpc.ChannelCredentials trusting(String caPem) {
        try {
            return io.grpc.TlsChannelCredentials.newBuilder().trustManager(new java.io.File(caPem)).build();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot read the CA certificate " + caPem, e);
        }
    }

    private List<ManagedChannel> channelsTo(String address) {
        return channelsByAddress.computeIfAbsent(address, a -> {
            List<ManagedChannel> channels = new ArrayList<>();
            for (int i = 0; i < o.channels; i++) {
                // TLS where the script names the CA the scheduler's certificate comes from (GPUCLOUD_CA_FILE)
                String ca = System.getenv("GPUCLOUD_CA_FILE");
                ManagedChannelBuilder<?> channel = ca == null || ca.isBlank()
                        ? ManagedChannelBuilder.forTarget(a).usePlaintext()
                        : Grpc.newChannelBuilder(a, trusting(ca));
                // authentication is on, as shipped: the script hands the driver a token (GPUCLOUD_TOKEN)
                String token = System.getenv("GPUCLOUD_TOKEN");
                if (token != null && !token.isBlank()) {
                    channel.intercept(new BearerToken(token).interceptor());
                }
                channels.add(channel.build());
            }
            return List.copyOf(channels);
        });
    }

    /** Waits until the scheduler knows --wait-hosts hosts; any instance can say, a standby too. */
    private void waitForHosts() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        int seen = 0;
        int asked = 0;
        String lastFailure = null;
        while (System.nanoTime() < deadline) {
            String address = o.targets.get(asked++ % o.targets.size());
            var cluster = ClusterServiceGrpc.newBlockingStub(channelsTo(address).get(0));
            try {
                List<Node> nodes = NodePages.all(ListNodesRequest.getDefaultInstance(),
                        page -> cluster.withDeadlineAfter(20, TimeUnit.SECONDS).listNodes(page));
                seen = (int) nodes.stream().filter(n -> n.getNodeId().startsWith(o.nodePrefix) && n.getHealthy()).count();
                if (seen >= o.waitHosts) {
                    System.out.printf(Locale.ROOT, "fleet: %d healthy hosts with prefix '%s' known to the scheduler%n",
                            seen, o.nodePrefix);
                    return;
                }
            } catch (RuntimeException e) {
                lastFailure = e.toString(); // the scheduler may still be starting
            }
            Thread.sleep(1000);
        }
        System.out.printf(Locale.ROOT, "fleet: only %d of %d hosts with prefix '%s' were healthy after 5 minutes;"
                + " running on those%s%n", seen, o.waitHosts, o.nodePrefix,
                lastFailure == null ? "" : " (the last ListNodes failed: " + lastFailure + ")");
    }

    private KafkaConsumer<String, byte[]> consumerAtEnd() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        KafkaConsumer<String, byte[]> consumer =
                new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
        String topic = Topics.JOB_EVENTS.name();
        List<TopicPartition> parts = new ArrayList<>();
        for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
            parts.add(new TopicPartition(topic, info.partition()));
        }
        consumer.assign(parts);
        consumer.seekToEnd(parts);
        parts.forEach(tp -> consumer.position(tp, Duration.ofSeconds(30))); // fix the start before submitting
        return consumer;
    }

    private void follow(KafkaConsumer<String, byte[]> consumer) {
        try (consumer) {
            while (consuming) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.nanoTime();
                    if (r.value() == null) {
                        continue;
                    }
                    JobEvent event;
                    try {
                        event = EventCodec.decode(Topics.JOB_EVENTS, r.value());
                    } catch (RuntimeException e) {
                        continue; // someone else's malformed record
                    }
                    if (event.state() != JobState.SCHEDULED || !o.tenant.equals(event.tenant())) {
                        continue;
                    }
                    Sub sub = byJob.get(event.jobId());
                    if (sub == null) {
                        early.putIfAbsent(event.jobId(), now);
                        sub = byJob.get(event.jobId()); // the answer may have landed in between
                        if (sub == null) {
                            continue;
                        }
                        early.remove(event.jobId());
                    }
                    if (sub.scheduledNanos == 0) {
                        sub.scheduledNanos = now;
                    }
                }
            }
        }
    }

    private void submitAll() throws InterruptedException {
        JobSpec spec = JobSpec.newBuilder().setName("load").setWorkers(1).setGpusPerWorker(o.gpus)
                .addCommand("sleep").addCommand(String.valueOf(o.runSeconds)).build();
        Semaphore window = new Semaphore(o.inflight);
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(o.warmup + o.seconds);
        long intervalNanos = o.rate > 0 ? (long) (1e9 / o.rate) : 0;
        long next = start;
        long n = 0;
        retryTimer.schedule(() -> cpuAtStart = o.cpu.read(), o.warmup, TimeUnit.SECONDS);
        retryTimer.schedule(() -> cpuAtEnd = o.cpu.read(), o.warmup + o.seconds, TimeUnit.SECONDS);
        System.out.printf(Locale.ROOT, "%s: tenant %s, %s for %d s (+%d s warm-up), %d channel(s), %d in flight at most,"
                        + " %d-GPU jobs of 'sleep %d', scheduler %s%n", o.label, o.tenant,
                o.rate > 0 ? String.format(Locale.ROOT, "offering %.0f jobs/s", o.rate) : "as fast as possible",
                o.seconds, o.warmup, o.channels, o.inflight, o.gpus, o.runSeconds, String.join(",", o.targets));
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            if (intervalNanos > 0) {
                if (now < next) {
                    LockSupport.parkNanos(Math.min(next - now, 1_000_000));
                    continue;
                }
                next += intervalNanos;
            }
            window.acquire();
            Sub sub = new Sub(System.nanoTime());
            all.add(sub);
            // one request per job, every try of it the same: a retry returns the first job, never a second
            SubmitJobRequest request = SubmitJobRequest.newBuilder().setTenant(o.tenant)
                    .setClientRequestId(o.tenant + "-" + n).setSpec(spec).build();
            send(request, sub, leader.get(), 0, window, n++);
        }
        // Wait for the last answers, then for SCHEDULED events to stop arriving (or the drain limit).
        window.acquire(o.inflight);
        long drainEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.drain);
        long lastCount = -1;
        long stableSince = System.nanoTime();
        while (System.nanoTime() < drainEnd) {
            long count = all.stream().filter(s -> s.scheduledNanos != 0).count();
            long accepted = all.stream().filter(s -> s.acceptedNanos != 0).count();
            if (count == accepted) {
                break;
            }
            if (count != lastCount) {
                lastCount = count;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > TimeUnit.SECONDS.toNanos(10)) {
                break;
            }
            Thread.sleep(200);
        }
        consuming = false;
        this.start = start;
    }

    private void send(SubmitJobRequest request, Sub sub, String address, int retry, Semaphore window, long n) {
        List<ManagedChannel> channels = channelsTo(address);
        var stub = JobServiceGrpc.newStub(channels.get((int) (n % channels.size())))
                .withDeadlineAfter(60, TimeUnit.SECONDS);
        stub.submitJob(request, new StreamObserver<>() {
            @Override
            public void onNext(SubmitJobResponse response) {
                sub.acceptedNanos = System.nanoTime();
                String id = response.getJob().getJobId();
                byJob.put(id, sub);
                Long at = early.remove(id);
                if (at != null) {
                    sub.scheduledNanos = at;
                }
            }

            @Override
            public void onError(Throwable t) {
                if (retried(t, request, sub, address, retry, window, n)) {
                    return;
                }
                rejected.incrementAndGet();
                rejections.computeIfAbsent(Status.fromThrowable(t).getCode().name(), k -> new AtomicLong())
                        .incrementAndGet();
                window.release();
            }

            @Override
            public void onCompleted() {
                window.release();
            }
        });
    }

    /**
     * Sends a submission that was turned away with UNAVAILABLE again, by the CLI's rules: to the leader
     * the trailer names (at once the first time), else to the next --target after back-off; false
     * when the status is another or --failover-timeout has passed since the first send.
     */
    private boolean retried(Throwable t, SubmitJobRequest request, Sub sub, String from, int retry, Semaphore window,
            long n) {
        Status status = Status.fromThrowable(t);
        if (status.getCode() != Status.Code.UNAVAILABLE) {
            return false;
        }
        Optional<String> named = LeaderFailover.leaderIn(t).filter(a -> !a.equals(from));
        String to = named.orElseGet(() -> LeaderFailover.nextAfter(o.targets, from));
        long waitNanos = named.isPresent() && retry == 0 ? 0 : LeaderFailover.backoff(retry).toNanos();
        if (System.nanoTime() + waitNanos - sub.sentNanos > (long) (o.failoverTimeout * 1e9)) {
            return false;
        }
        retries.incrementAndGet();
        if (retry == 0) {
            retriedSubmissions.incrementAndGet();
        }
        if (leader.compareAndSet(from, to)) { // one line per move of the whole run, not one per submission
            System.err.println(o.label + ": " + LeaderFailover.notice(from, status, to, named.isPresent()));
        }
        try {
            retryTimer.schedule(() -> send(request, sub, to, retry + 1, window, n), waitNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return false; // the run is over
        }
        return true;
    }

    private void report() {
        long windowStart = start + TimeUnit.SECONDS.toNanos(o.warmup);
        long windowEnd = windowStart + TimeUnit.SECONDS.toNanos(o.seconds);
        double secs = o.seconds;
        long sent = 0;
        long acceptedInWindow = 0;
        long scheduledInWindow = 0;
        long acceptedTotal = 0;
        long scheduledTotal = 0;
        List<Long> latencies = new ArrayList<>();
        for (Sub s : all) {
            if (s.acceptedNanos != 0) {
                acceptedTotal++;
                if (s.acceptedNanos >= windowStart && s.acceptedNanos < windowEnd) {
                    acceptedInWindow++;
                }
            }
            if (s.scheduledNanos != 0) {
                scheduledTotal++;
                if (s.scheduledNanos >= windowStart && s.scheduledNanos < windowEnd) {
                    scheduledInWindow++;
                }
            }
            if (s.sentNanos >= windowStart && s.sentNanos < windowEnd) {
                sent++;
                if (s.scheduledNanos != 0) {
                    latencies.add(s.scheduledNanos - s.sentNanos);
                }
            }
        }
        long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf(Locale.ROOT, "%s: offered %.1f jobs/s in the %d s window (%d sent)%n", o.label, sent / secs,
                o.seconds, sent);
        System.out.printf(Locale.ROOT, "%s: accepted submissions %.1f /s (SubmitJob OK)%n", o.label,
                acceptedInWindow / secs);
        System.out.printf(Locale.ROOT, "%s: SCHEDULED events %.1f /s (persisted placements seen on job.events)%n",
                o.label, scheduledInWindow / secs);
        if (l.length > 0) {
            System.out.printf(Locale.ROOT, "%s: SubmitJob -> SCHEDULED latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f"
                            + " (%d jobs sent in the window)%n", o.label, pct(l, 50), pct(l, 90), pct(l, 99),
                    l[l.length - 1] / 1e6, l.length);
        }
        System.out.printf(Locale.ROOT, "%s: totals: %d sent, %d accepted, %d rejected %s, %d SCHEDULED seen,"
                        + " %d accepted but not seen SCHEDULED by the end%n", o.label, all.size(), acceptedTotal,
                rejected.get(), rejections, scheduledTotal, acceptedTotal - scheduledTotal);
        if (cpuAtStart != null && cpuAtEnd != null) {
            System.out.printf(Locale.ROOT, "%s: CPU per SCHEDULED job in the window: %s%n", o.label,
                    ProcessCpu.perJob(cpuAtStart, cpuAtEnd, secs, scheduledInWindow));
        }
        System.out.printf(Locale.ROOT, "%s: failover: %d retries on UNAVAILABLE (%d submissions retried, each with its"
                        + " first client_request_id), submitting to %s at the end%n", o.label, retries.get(),
                retriedSubmissions.get(), leader.get());
    }

    private static double pct(long[] sorted, double p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }
}
