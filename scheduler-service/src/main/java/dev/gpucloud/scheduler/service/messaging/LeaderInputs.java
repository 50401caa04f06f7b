package dev.gpucloud.scheduler.service.messaging;

import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.KafkaAccess;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.leader.LeaderState;
import dev.gpucloud.scheduler.service.leader.NotLeaderException;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The inputs that change the scheduler's state (allocation.events, job.requests, node.events), read only
 * while this instance leads. One consumer, started at takeover and closed when the lead is lost, joins
 * the group under a fixed static member name: a new leader's consumer replaces the old leader's member
 * at once (Kafka fences the old one), so its partitions move without waiting out a session, and a
 * paused old leader that resumes can no longer commit. Offsets are committed after a poll's records are
 * applied, so a record is applied again (idempotently) rather than lost when the lead moves mid-poll.
 */
@ApplicationScoped
public class LeaderInputs {

    private static final Logger LOG = Logger.getLogger(LeaderInputs.class);
    private static final List<String> TOPICS = List.of(Topics.ALLOCATION_EVENTS.name(), Topics.JOB_REQUESTS.name(),
            Topics.NODE_EVENTS.name());

    private final FleetConsumers consumers;
    private final LeaderState state;
    private final SchedulerConfig config;
    private final String bootstrap;
    private Worker worker;

    public LeaderInputs(FleetConsumers consumers, LeaderState state, SchedulerConfig config,
            @ConfigProperty(name = "kafka.bootstrap.servers") String bootstrap) {
        this.consumers = consumers;
        this.state = state;
        this.config = config;
        this.bootstrap = bootstrap;
    }

    /** Starts reading (at takeover); a second start while reading does nothing. */
    public synchronized void start() {
        if (worker != null && worker.isAlive()) {
            return;
        }
        worker = new Worker();
        worker.start();
    }

    /** Stops reading and leaves the records not yet applied for the next leader; waits a few seconds at most. */
    public void stop() {
        Worker w;
        synchronized (this) {
            w = worker;
            worker = null;
        }
        if (w == null) {
            return;
        }
        w.running = false;
        w.wakeup();
        if (Thread.currentThread() != w) {
            try {
                w.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Properties properties() {
        Properties p = new Properties();
        p.putAll(KafkaAccess.loginSettings(
                key -> org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue(key, String.class)));
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, config.inputsGroup());
        p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.inputsMember());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, config.inputsOffsetReset());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, state.instance() + "-leader-inputs");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    private final class Worker extends Thread {

        volatile KafkaConsumer<String, byte[]> consumer;
        volatile boolean running = true;

        Worker() {
            super("scheduler-leader-inputs");
            setDaemon(true);
        }

        void wakeup() {
            KafkaConsumer<String, byte[]> c = consumer;
            if (c != null) {
                c.wakeup();
            }
        }

        /**
         * Reads until stopped or deposed. A poll that could not be applied (say, its dead letters could not be
         * sent) is read again from the last commit by a fresh consumer, a second later.
         */
        @Override
        public void run() {
            while (running && state.leads()) {
                try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(properties())) {
                    consumer = c;
                    if (!running) {
                        return;
                    }
                    c.subscribe(TOPICS);
                    LOG.infof("%s reads %s as the leader (group %s, member %s)", state.instance(), TOPICS,
                            config.inputsGroup(), config.inputsMember());
                    while (running) {
                        ConsumerRecords<String, byte[]> polled = c.poll(Duration.ofMillis(500));
                        if (polled.isEmpty()) {
                            continue;
                        }
                        if (!apply(polled)) {
                            break; // what was not committed is read again, by this leader or the next
                        }
                        c.commitSync();
                    }
                } catch (WakeupException e) {
                    return; // stop() woke the poll
                } catch (FencedInstanceIdException e) {
                    LOG.warnf("another scheduler took the leader's place in group %s", config.inputsGroup());
                    state.fenced("another instance reads the leader's inputs");
                    return;
                } catch (RuntimeException e) {
                    if (running) {
                        LOG.warnf("the leader's inputs failed (%s); reading again from the last commit", e.toString());
                    }
                }
                pause();
            }
        }

        private void pause() {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running = false;
            }
        }

        /** Applies a poll: allocation events as one batch, then requests and node events one at a time. */
        private boolean apply(ConsumerRecords<String, byte[]> polled) {
            List<ConsumerRecord<String, byte[]>> allocations = new ArrayList<>();
            List<ConsumerRecord<String, byte[]>> others = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> r : polled) {
                (r.topic().equals(Topics.ALLOCATION_EVENTS.name()) ? allocations : others).add(r);
            }
            if (!allocations.isEmpty() && !await(consumers.allocations(allocations))) {
                return false;
            }
            for (ConsumerRecord<String, byte[]> r : others) {
                Uni<Void> one = r.topic().equals(Topics.JOB_REQUESTS.name()) ? consumers.requestOrDeadLetter(r)
                        : consumers.nodeEventOrDeadLetter(r);
                if (!await(one)) {
                    return false;
                }
            }
            return true;
        }

        /** Waits for {@code work} while this instance reads; false when it was deposed or stopped meanwhile. */
        private boolean await(Uni<Void> work) {
            CompletableFuture<Void> done = work.subscribeAsCompletionStage();
            while (true) {
                try {
                    done.get(250, TimeUnit.MILLISECONDS);
                    return true;
                } catch (TimeoutException e) {
                    if (!running || !state.leads()) {
                        done.cancel(true);
                        return false;
                    }
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof NotLeaderException)) {
                        LOG.warnf("a poll of the leader's inputs could not be applied; it is read again: %s",
                                e.getCause().toString());
                    }
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }
}
