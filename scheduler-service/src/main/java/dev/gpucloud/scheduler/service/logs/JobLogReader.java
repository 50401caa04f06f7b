package dev.gpucloud.scheduler.service.logs;

import dev.gpucloud.contracts.events.Envelope;
import dev.gpucloud.contracts.events.JobLogChunk;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobView;
import io.micrometer.core.instrument.Counter;
import io.smallrye.mutiny.Uni;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Reads one job's output from {@code job.logs} for a StreamLogs call. The topic is keyed by job id, so a job's chunks
 * lie in one partition: the reader takes that partition alone (no consumer group, nothing committed), seeks to a
 * little before the job was submitted (or before {@code since}) by record time, and keeps the job's chunks. A chunk is
 * shown only if it is the job's tenant's and comes from one of the job's allocations (in any attempt) on that
 * allocation's host and rank, so no agent can write into another job's output; each (allocation, stream)'s lines are
 * shown once, by offset, whatever the agent sent twice.
 *
 * <p>Without follow the call ends at the partition's end as it was when the call began. With follow it goes on until
 * the job has ended and every stream of its last placement's workers has said it ended (or, for an agent that died
 * with its host, {@link #QUIET} after the job ended with nothing new). At most {@code maxStreams} calls read at once.
 */
@ApplicationScoped
public class JobLogReader {

    private static final Logger LOG = Logger.getLogger(JobLogReader.class);

    /** Records are stamped by the agents' clocks: the seek starts this much before the instant asked for. */
    static final Duration SKEW = Duration.ofMinutes(10);
    /** How long after its job ended a follow waits for streams that never say they ended. */
    static final Duration QUIET = Duration.ofSeconds(15);
    /** How often a follow reads its job's state again. */
    static final Duration RECHECK = Duration.ofSeconds(1);

    /** Where a call's chunks go; false from {@code send} means the caller went away. */
    public interface Output {
        boolean send(JobLogChunk chunk, List<JobLogChunk.Line> lines);

        boolean cancelled();
    }

    /** What a call asks for: a rank, a stream, or every one (null), lines read at or after {@code since}. */
    public record Request(String jobId, boolean follow, Instant since, Integer rank, JobLogChunk.Stream stream) {
    }

    /** How a call ended: how many lines it showed, and whether the job had no output because it never ran. */
    public record Outcome(long lines, boolean neverRan) {
    }

    private final String bootstrap;
    private final Semaphore streams;
    private final int maxStreams;
    private final ExecutorService threads;
    private final AtomicInteger calls = new AtomicInteger();
    private final Counter malformed;
    private final Counter foreign;

    @Inject
    public JobLogReader(@ConfigProperty(name = "kafka.bootstrap.servers") String bootstrap,
            @ConfigProperty(name = "gpucloud.scheduler.logs.max-streams", defaultValue = "64") int maxStreams,
            MeterRegistry registry) {
        this.bootstrap = bootstrap;
        this.maxStreams = maxStreams;
        this.streams = new Semaphore(maxStreams);
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "job-logs-" + calls.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.malformed = Counter.builder("gpucloud_scheduler_log_records_malformed")
                .description("job.logs records StreamLogs skipped as unreadable").register(registry);
        this.foreign = Counter.builder("gpucloud_scheduler_log_records_foreign")
                .description("job.logs chunks skipped as not from a host of the job or of another tenant")
                .register(registry);
    }

    /** Takes a place for one call; false when {@code maxStreams} calls read already. */
    public boolean admit() {
        return streams.tryAcquire();
    }

    public int maxStreams() {
        return maxStreams;
    }

    /** Runs an admitted call on a thread of its own; {@code done} gets its outcome or its failure. */
    public void start(JobView job, Request request, Supplier<JobView> reload,
            Supplier<Map<String, JobQueries.Worker>> workers, Output out,
            java.util.function.BiConsumer<Outcome, Throwable> done) {
        threads.execute(() -> {
            try {
                done.accept(read(job, request, reload, new Workers(workers), out), null);
            } catch (RuntimeException e) {
                done.accept(null, e);
            } finally {
                streams.release();
            }
        });
    }

    Outcome read(JobView job, Request request, Supplier<JobView> reload, Workers workers, Output out) {
        Properties p = new Properties();
        p.putAll(KafkaAccess.loginSettings(
                key -> org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue(key, String.class)));
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "scheduler-logs-" + request.jobId());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
            int partitions = consumer.partitionsFor(Topics.JOB_LOGS.name(), Duration.ofSeconds(10)).size();
            TopicPartition tp = new TopicPartition(Topics.JOB_LOGS.name(), partitionOf(request.jobId(), partitions));
            consumer.assign(List.of(tp));
            Instant from = (request.since() != null ? request.since() : job.submittedAt()).minus(SKEW);
            // the end first: a chunk written after it is either found by time or read from it, never skipped
            // (read after the lookup, the end could already lie past a chunk the lookup did not see yet)
            long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
            OffsetAndTimestamp at = consumer.offsetsForTimes(Map.of(tp, Math.max(0, from.toEpochMilli())),
                    Duration.ofSeconds(10)).get(tp);
            if (at == null) {
                consumer.seek(tp, end);
            } else {
                consumer.seek(tp, at.offset());
            }
            return follow(consumer, tp, end, job, request, reload, workers, out);
        }
    }

    private Outcome follow(KafkaConsumer<String, byte[]> consumer, TopicPartition tp, long end, JobView first,
            Request request, Supplier<JobView> reload, Workers workers, Output out) {
        JobView job = first;
        Map<String, Long> shown = new HashMap<>();
        Set<String> ended = new HashSet<>();
        Set<String> allocations = new HashSet<>();
        long lines = 0;
        boolean anything = false;
        long checked = System.nanoTime();
        Long finalSince = job.state().isFinal() ? System.nanoTime() : null;
        long lastNew = System.nanoTime();
        while (!out.cancelled()) {
            for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                if (!request.jobId().equals(record.key())) {
                    continue;
                }
                JobLogChunk chunk;
                try {
                    Envelope<JobLogChunk> envelope = EventRecords.decode(Topics.JOB_LOGS, record);
                    chunk = envelope.payload();
                    if (chunk == null) {
                        throw new MalformedEventException(Topics.JOB_LOGS.name() + ": a record without a value");
                    }
                } catch (RuntimeException e) {
                    // whatever one record holds, it is skipped: it must not end every later read of the job's output
                    malformed.increment();
                    LOG.debugf("skipped a job.logs record at offset %d: %s", record.offset(), e.getMessage());
                    continue;
                }
                if (!chunk.jobId().equals(job.jobId()) || !chunk.tenant().equals(job.tenant())
                        || !workers.ran(chunk)) {
                    foreign.increment();
                    continue;
                }
                anything = true;
                lastNew = System.nanoTime();
                String key = chunk.allocationId() + "/" + chunk.stream();
                allocations.add(chunk.allocationId());
                if (chunk.end()) {
                    ended.add(key);
                }
                if ((request.rank() != null && request.rank() != chunk.rank())
                        || (request.stream() != null && request.stream() != chunk.stream())) {
                    continue;
                }
                long last = shown.getOrDefault(key, -1L);
                List<JobLogChunk.Line> fresh = chunk.lines().stream()
                        .filter(l -> l.offset() > last)
                        .filter(l -> request.since() == null || !l.at().isBefore(request.since()))
                        .toList();
                if (!chunk.lines().isEmpty()) {
                    shown.put(key, Math.max(last, chunk.lines().get(chunk.lines().size() - 1).offset()));
                }
                if (fresh.isEmpty() && !chunk.end()) {
                    continue;
                }
                if (!out.send(chunk, fresh)) {
                    return new Outcome(lines, false);
                }
                lines += fresh.size();
            }
            boolean caughtUp = consumer.position(tp) >= end;
            if (!request.follow()) {
                if (caughtUp) {
                    return new Outcome(lines, !anything && first.placement().isEmpty());
                }
                continue;
            }
            if (System.nanoTime() - checked >= RECHECK.toNanos()) {
                checked = System.nanoTime();
                JobView again = reload.get();
                if (again != null) {
                    job = again;
                    job.placement().forEach(w -> allocations.add(w.allocationId()));
                }
                if (job.state().isFinal() && finalSince == null) {
                    finalSince = System.nanoTime();
                }
                end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
            }
            if (finalSince != null && consumer.position(tp) >= end) {
                boolean allEnded = !allocations.isEmpty() && allocations.stream().allMatch(a ->
                        ended.contains(a + "/" + JobLogChunk.Stream.STDOUT)
                                && ended.contains(a + "/" + JobLogChunk.Stream.STDERR));
                long quiet = System.nanoTime() - Math.max(finalSince, lastNew);
                if (allEnded || quiet >= QUIET.toNanos()) {
                    return new Outcome(lines, !anything && job.placement().isEmpty() && allocations.isEmpty());
                }
            }
        }
        return new Outcome(lines, false);
    }

    /**
     * The job's workers in every attempt, read when a call starts and again (at most once a second) when a chunk names
     * an allocation not read yet: a resumed job's new workers come along, and a chunk of an allocation the job never
     * had, or from another host or rank than its allocation's, is not the job's.
     */
    static final class Workers {
        private final Supplier<Map<String, JobQueries.Worker>> read;
        private Map<String, JobQueries.Worker> known;
        private long readAt;

        Workers(Supplier<Map<String, JobQueries.Worker>> read) {
            this.read = read;
        }

        boolean ran(JobLogChunk chunk) {
            JobQueries.Worker w = known == null ? null : known.get(chunk.allocationId());
            if (w == null && (known == null || System.nanoTime() - readAt >= RECHECK.toNanos())) {
                Map<String, JobQueries.Worker> fresh = read.get();
                readAt = System.nanoTime();
                if (fresh != null) {
                    known = fresh;
                }
                w = known == null ? null : known.get(chunk.allocationId());
            }
            return w != null && w.nodeId().equals(chunk.nodeId()) && w.rank() == chunk.rank();
        }
    }

    /**
     * What {@code read} gives, read on the call's Vert.x context (Hibernate Reactive's rule) from a reader's thread;
     * null where it cannot be read this time (the reader asks again).
     */
    public static <T> T onContext(io.vertx.core.Context context, java.util.function.Supplier<Uni<T>> read) {
        java.util.concurrent.CompletableFuture<T> result = new java.util.concurrent.CompletableFuture<>();
        Runnable run = () -> read.get().subscribe().with(result::complete, result::completeExceptionally);
        if (context != null) {
            context.runOnContext(v -> run.run());
        } else {
            run.run();
        }
        try {
            return result.get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return null;
        }
    }

    /** The partition Kafka's producer puts a record keyed {@code key} in (murmur2 of its UTF-8 bytes). */
    static int partitionOf(String key, int partitions) {
        return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
    }
}
