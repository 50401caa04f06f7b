package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.Reports;
import dev.gpucloud.contracts.events.MalformedEventException;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.contracts.kafka.TraceHeaders;
import dev.gpucloud.contracts.logging.LogFields;
import dev.gpucloud.contracts.tracing.Spans;
import dev.gpucloud.contracts.tracing.Traceparent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Carries out node.commands addressed to this agent's hosts. Every agent reads every partition (its
 * own consumer group) and skips other hosts' commands. A record that cannot be read is
 * dead-lettered (node.commands.dlq, reason in the dead-letter-reason header) when its key names one
 * of our hosts or names none at all; when its key names another host, that host's agent
 * dead-letters it, and this one only skips it, so a bad record lands in the DLQ once, not once per
 * agent. A command written by a deposed scheduler leader (an epoch below one already seen, see
 * {@link EpochFence}) is refused, logged with the reason and counted in
 * {@code gpucloud_agent_commands_refused_total{reason="stale-epoch"}}.
 */
@ApplicationScoped
public class CommandConsumer {

    private static final Logger LOG = Logger.getLogger(CommandConsumer.class);

    private final AllocationRunner runner;
    private final EventPublisher publisher;
    private final HostReporter hosts;
    private final EpochFence fence;
    private final Counter staleEpoch;
    private final AllocationTraces traces;
    private final Tracer tracer;

    public CommandConsumer(AllocationRunner runner, EventPublisher publisher, HostReporter hosts, MeterRegistry registry,
            dev.gpucloud.agent.config.AgentConfig config, AllocationTraces traces, Tracer tracer) {
        this.runner = runner;
        this.traces = traces;
        this.tracer = tracer;
        this.publisher = publisher;
        this.hosts = hosts;
        this.fence = new EpochFence(DurableOutbox.spoolDir(config).resolve("leader-epoch"),
                problem -> LOG.warn(problem));
        this.staleEpoch = Counter.builder("gpucloud.agent.commands.refused").tag("reason", "stale-epoch")
                .description("node.commands refused because a newer scheduler leader has spoken")
                .register(registry);
        Gauge.builder("gpucloud.agent.leader.epoch", fence, EpochFence::highest)
                .description("The highest scheduler leader epoch seen on node.commands").register(registry);
    }

    @Incoming("commands-in")
    public Uni<Void> consume(ConsumerRecord<String, byte[]> record) {
        NodeCommand command;
        try {
            command = EventRecords.decode(Topics.NODE_COMMANDS, record).payload();
            if (command == null) {
                throw new MalformedEventException(Topics.NODE_COMMANDS.name() + ": record has no value (a tombstone)");
            }
        } catch (MalformedEventException e) {
            String key = record.key();
            if (key != null && !key.isBlank() && !runner.owns(key)) {
                LOG.debugf("skipped unreadable node.commands record for %s (its agent dead-letters it): %s", key,
                        e.getMessage());
                return Uni.createFrom().voidItem();
            }
            LOG.warnf("dead-lettering node.commands record %d@%d (key %s): %s", record.partition(), record.offset(),
                    key, e.getMessage());
            return Uni.createFrom().failure(e);
        }
        if (!runner.owns(command.nodeId())) {
            return Uni.createFrom().voidItem();
        }
        if (!fence.admit(command.epoch())) {
            staleEpoch.increment();
            LOG.warnf("refused %s %s for %s (command %s): written under scheduler epoch %d, but leader epoch %d has"
                    + " spoken since; the scheduler that sent it is deposed", command.type(), command.allocationId(),
                    command.nodeId(), command.commandId(), command.epoch(), fence.highest());
            return Uni.createFrom().voidItem();
        }
        // the command is carried out in a span of the job's trace, which the scheduler's record names as parent
        Span span = Spans.childIfTraced(tracer, "node.commands " + command.type(), TraceHeaders.extract(record.headers()),
                SpanKind.CONSUMER, LogFields.JOB_ID, command.jobId(), LogFields.TENANT, command.tenant(),
                LogFields.NODE_ID, command.nodeId(), LogFields.ALLOCATION_ID, command.allocationId(),
                "command", command.type().name());
        String trace = Traceparent.of(span);
        if (command.type() == NodeCommandType.START) {
            traces.started(command.allocationId(), trace);
        }
        Reports reports;
        try {
            reports = runner.handle(command);
        } catch (RuntimeException e) {
            try (LogFields fields = LogFields.of(LogFields.JOB_ID, command.jobId(), LogFields.TENANT, command.tenant(),
                    LogFields.NODE_ID, command.nodeId(), LogFields.ALLOCATION_ID, command.allocationId(),
                    LogFields.TRACE_ID, Spans.traceId(span))) {
                LOG.errorf(e, "command %s (%s %s) failed", command.commandId(), command.type(), command.allocationId());
            }
            Spans.end(span, e);
            return Uni.createFrom().failure(e);
        }
        Uni<Void> published = publisher.publish(reports, trace);
        if (!reports.inventoryChanged().isEmpty()) {
            // a START created or destroyed MIG instances: the scheduler and metrics see the new layout at once
            published = published.call(() -> hosts.announce(reports.inventoryChanged())
                    .onFailure().invoke(e -> LOG.warnf("changed inventory of %s not sent yet (the periodic one will):"
                            + " %s", reports.inventoryChanged(), e.getMessage()))
                    .onFailure().recoverWithNull());
        }
        return published.onItemOrFailure().invoke((ok, failure) -> Spans.end(span, failure));
    }
}
