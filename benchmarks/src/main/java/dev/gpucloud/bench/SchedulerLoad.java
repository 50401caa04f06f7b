package dev.gpucloud.bench;

import dev.gpucloud.contracts.events.EventCodec;
import dev.gpucloud.contracts.events.JobEvent;
import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.grpc.v1.ClusterServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.ListNodesRequest;
import dev.gpucloud.contracts.grpc.v1.Node;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.contracts.grpc.v1.SubmitJobResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * <p>Prints accepted submissions/s, SCHEDULED events/s over the measurement window, and the
 * latency from SubmitJob sent to SCHEDULED received (p50, p90, p99, max). Run it through
 * {@code benchmarks/scheduler-load.sh}, which starts a private scheduler and a simulated fleet;
 * {@code --help} lists the options.
 */
public final class SchedulerLoad {

    record Options(String target, String bootstrap, String tenant, String nodePrefix, int waitHosts,
            double rate, int seconds, int warmup, int drain, int channels, int inflight, int gpus,
            int runSeconds, String label) {

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
            Options o = new Options(
                    m.getOrDefault("target", "localhost:18181"),
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
                    m.getOrDefault("label", "run"));
            m.keySet().removeAll(List.of("target", "bootstrap", "tenant", "node-prefix", "wait-hosts", "rate",
                    "seconds", "warmup", "drain", "channels", "inflight", "gpus", "run-seconds", "label"));
            if (!m.isEmpty()) {
                usage("unknown option(s) " + m.keySet());
            }
            if (o.rate < 0 || o.seconds < 1 || o.warmup < 0 || o.channels < 1 || o.inflight < 1 || o.gpus < 1) {
                usage("rate >= 0, seconds >= 1, warmup >= 0, channels >= 1, inflight >= 1, gpus >= 1");
            }
            return o;
        }

        private static double number(Map<String, String> m, String key) {
            try {
                return Double.parseDouble(m.getOrDefault(key, "0"));
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

        private static void usage(String error) {
            if (error != null) {
                System.err.println("error: " + error);
            }
            System.err.println("""
                    usage: SchedulerLoad [--target host:port] [--bootstrap host:port] [--tenant T]
                             [--rate JOBS_PER_S (0: as fast as --inflight allows)] [--seconds N] [--warmup N]
                             [--drain N] [--channels N] [--inflight N] [--gpus N] [--run-seconds N]
                             [--node-prefix P --wait-hosts N] [--label L]""");
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
    private volatile boolean consuming = true;
    /** When submitting began (System.nanoTime); the measurement window opens --warmup seconds later. */
    private long start;

    SchedulerLoad(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        new SchedulerLoad(Options.parse(args)).run();
    }

    void run() throws Exception {
        List<ManagedChannel> channels = new ArrayList<>();
        for (int i = 0; i < o.channels; i++) {
            channels.add(ManagedChannelBuilder.forTarget(o.target).usePlaintext().build());
        }
        try {
            if (o.waitHosts > 0) {
                waitForHosts(channels.get(0));
            }
            KafkaConsumer<String, byte[]> consumer = consumerAtEnd();
            Thread follower = new Thread(() -> follow(consumer), "job-events");
            follower.setDaemon(true);
            follower.start();
            submitAll(channels);
            follower.join();
            report();
        } finally {
            for (ManagedChannel c : channels) {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private void waitForHosts(ManagedChannel channel) throws InterruptedException {
        var cluster = ClusterServiceGrpc.newBlockingStub(channel);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        int seen = 0;
        while (System.nanoTime() < deadline) {
            try {
                List<Node> nodes = cluster.withDeadlineAfter(20, TimeUnit.SECONDS)
                        .listNodes(ListNodesRequest.getDefaultInstance()).getNodesList();
                seen = (int) nodes.stream().filter(n -> n.getNodeId().startsWith(o.nodePrefix) && n.getHealthy()).count();
                if (seen >= o.waitHosts) {
                    System.out.printf(Locale.ROOT, "fleet: %d healthy hosts with prefix '%s' known to the scheduler%n",
                            seen, o.nodePrefix);
                    return;
                }
            } catch (RuntimeException e) {
                // the scheduler may still be starting
            }
            Thread.sleep(1000);
        }
        System.out.printf(Locale.ROOT, "fleet: only %d of %d hosts with prefix '%s' were healthy after 5 minutes;"
                + " running on those%n", seen, o.waitHosts, o.nodePrefix);
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

    private void submitAll(List<ManagedChannel> channels) throws InterruptedException {
        List<JobServiceGrpc.JobServiceStub> stubs = channels.stream().map(JobServiceGrpc::newStub).toList();
        JobSpec spec = JobSpec.newBuilder().setName("load").setWorkers(1).setGpusPerWorker(o.gpus)
                .addCommand("sleep").addCommand(String.valueOf(o.runSeconds)).build();
        Semaphore window = new Semaphore(o.inflight);
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(o.warmup + o.seconds);
        long intervalNanos = o.rate > 0 ? (long) (1e9 / o.rate) : 0;
        long next = start;
        long n = 0;
        System.out.printf(Locale.ROOT, "%s: tenant %s, %s for %d s (+%d s warm-up), %d channel(s), %d in flight at most,"
                        + " %d-GPU jobs of 'sleep %d'%n", o.label, o.tenant,
                o.rate > 0 ? String.format(Locale.ROOT, "offering %.0f jobs/s", o.rate) : "as fast as possible",
                o.seconds, o.warmup, o.channels, o.inflight, o.gpus, o.runSeconds);
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
            String requestId = o.tenant + "-" + n;
            var stub = stubs.get((int) (n++ % stubs.size())).withDeadlineAfter(60, TimeUnit.SECONDS);
            stub.submitJob(SubmitJobRequest.newBuilder().setTenant(o.tenant).setClientRequestId(requestId)
                    .setSpec(spec).build(), new StreamObserver<>() {
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
    }

    private static double pct(long[] sorted, double p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }
}
