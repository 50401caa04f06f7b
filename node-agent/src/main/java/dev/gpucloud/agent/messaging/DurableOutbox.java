package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.agent.spool.LatestSender;
import dev.gpucloud.agent.spool.SheddingQueue;
import dev.gpucloud.agent.spool.Spool;
import dev.gpucloud.agent.spool.SpoolSender;
import dev.gpucloud.agent.spool.SpooledRecord;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;
import org.jboss.logging.Logger;

/**
 * The agent's way out to Kafka. Usage and allocation events are written to the durable spool
 * first and leave it only when the broker has acknowledged them; telemetry goes through a bounded
 * queue that sheds its oldest samples while the broker is away. Everything is sent through the one
 * events-out channel.
 */
@ApplicationScoped
public class DurableOutbox {

    private static final Logger LOG = Logger.getLogger(DurableOutbox.class);

    @Inject
    @Channel("events-out")
    @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 16_384)
    MutinyEmitter<ProducerRecord<String, byte[]>> emitter;

    @Inject
    AgentConfig config;

    @Inject
    MeterRegistry registry;

    private SpoolSender sender;
    private SheddingQueue<ProducerRecord<String, byte[]>> telemetry;
    private LatestSender<ProducerRecord<String, byte[]>> telemetrySender;

    /** Opens the spool and starts sending what an earlier run left in it. */
    void onStart(@Observes StartupEvent event) {
        open();
    }

    synchronized void open() {
        if (sender != null) {
            return;
        }
        AgentConfig.Spool settings = config.spool();
        Path dir = spoolDir(config);
        Spool spool = new Spool(dir, settings.fsync());
        sender = new SpoolSender(spool, r -> emitter.send(SpoolRecords.producerRecord(r)).subscribeAsCompletionStage(),
                settings.batch(), Duration.ofMinutes(3), Duration.ofSeconds(10), LOG::warn);
        telemetry = new SheddingQueue<>(settings.telemetryQueue(), ProducerRecord::key); // a host's latest sample
        telemetrySender = new LatestSender<>(telemetry, settings.telemetryInFlight(),
                r -> emitter.send(r).subscribeAsCompletionStage(),
                f -> LOG.debugf("a telemetry sample was not sent: %s", f.getMessage()));
        LOG.infof("spooling usage and allocation events in %s (fsync %s)", dir, settings.fsync());
        sender.start();
        Gauge.builder("gpucloud_agent_spool_pending", sender, SpoolSender::pending)
                .description("Usage and allocation events spooled and not yet acknowledged by Kafka").register(registry);
        FunctionCounter.builder("gpucloud_agent_spool_sent", sender, SpoolSender::sent)
                .description("Spooled events acknowledged by Kafka").register(registry);
        FunctionCounter.builder("gpucloud_agent_spool_send_failures", sender, SpoolSender::failedSends)
                .description("Spooled event sends that failed and were retried").register(registry);
        FunctionCounter.builder("gpucloud_agent_telemetry_shed", telemetry, SheddingQueue::shed)
                .description("Telemetry samples dropped, oldest first, while Kafka did not keep up").register(registry);
    }

    /** Where the agent keeps what must outlive it: the spool, and the highest leader epoch seen. */
    static Path spoolDir(AgentConfig config) {
        return config.spool().dir().filter(d -> !d.isBlank()).map(Path::of)
                .orElse(Path.of(System.getProperty("java.io.tmpdir"), "gpucloud-agent-" + config.id(), "spool"));
    }

    void onShutdown(@Observes ShutdownEvent event) {
        SpoolSender s;
        synchronized (this) {
            s = sender;
        }
        if (s == null) {
            return;
        }
        try {
            if (!s.awaitEmpty(Duration.ofSeconds(5))) {
                LOG.warnf("%d event(s) stay in the spool for the next start", s.pending());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        s.close();
    }

    /** Writes {@code records} to the spool; when this returns they survive a crash, and they are sent in order. */
    public void spool(List<ProducerRecord<String, byte[]>> records) {
        open();
        sender.submit(records.stream().map(SpoolRecords::spooled).toList());
    }

    /** Queues one telemetry record, shedding the oldest if the queue is full, and sends what it may. */
    public void telemetry(ProducerRecord<String, byte[]> record) {
        open();
        telemetrySender.offer(record);
    }

    /** Telemetry samples shed so far. */
    public long telemetryShed() {
        return telemetry == null ? 0 : telemetry.shed();
    }

    /** Sends one record directly (inventory and its tombstones: the latest state, sent again every interval). */
    public io.smallrye.mutiny.Uni<Void> send(ProducerRecord<String, byte[]> record) {
        return emitter.send(record);
    }

    /** Spooled records not yet acknowledged. */
    public int pending() {
        open();
        return sender.pending();
    }
}
