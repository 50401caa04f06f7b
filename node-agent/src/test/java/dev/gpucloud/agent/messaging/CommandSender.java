package dev.gpucloud.agent.messaging;

import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Plays the scheduler in tests: sends node.commands with a plain producer, as any client would. */
final class CommandSender implements AutoCloseable {

    private final KafkaProducer<String, byte[]> producer;

    CommandSender(String bootstrap) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    static NodeCommand start(String node, String allocationId, List<Integer> gpus, List<String> command) {
        return new NodeCommand(UUID.randomUUID().toString(), NodeCommandType.START, node, allocationId,
                "job-" + allocationId, "acme", gpus, null, 0, 0, 1, null, command, Map.of(), null, null, null,
                Instant.now());
    }

    static NodeCommand command(NodeCommandType type, String node, String allocationId, String checkpointDir) {
        return new NodeCommand(UUID.randomUUID().toString(), type, node, allocationId, "job-" + allocationId, "acme",
                List.of(), null, 0, 0, 0, null, List.of(), Map.of(), checkpointDir, null,
                type == NodeCommandType.CHECKPOINT ? Instant.now().plusSeconds(120) : null, Instant.now());
    }

    void send(NodeCommand command) {
        send(EventRecords.record(Topics.NODE_COMMANDS, command.nodeId(), command, "/test/scheduler"));
    }

    void send(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot send " + record, e);
        }
    }

    @Override
    public void close() {
        producer.close();
    }
}
