package dev.gpucloud.agent.messaging;

import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.NodeCommandType;
import dev.gpucloud.contracts.events.Topics;
import dev.gpucloud.contracts.kafka.EventRecords;
import dev.gpucloud.testsupport.TestKafka;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Plays the scheduler in tests: builds node.commands and sends them on the test's plain Kafka client. */
final class CommandSender {

    private final TestKafka kafka;

    CommandSender(TestKafka kafka) {
        this.kafka = kafka;
    }

    static NodeCommand start(String node, String allocationId, List<Integer> gpus, List<String> command) {
        return new NodeCommand(UUID.randomUUID().toString(), NodeCommandType.START, node, allocationId,
                "job-" + allocationId, "test-tenant", gpus, null, 0, 0, 1, null, command, Map.of(), null, null, null,
                Instant.now());
    }

    static NodeCommand command(NodeCommandType type, String node, String allocationId, String checkpointDir) {
        return new NodeCommand(UUID.randomUUID().toString(), type, node, allocationId, "job-" + allocationId, "test-tenant",
                List.of(), null, 0, 0, 0, null, List.of(), Map.of(), checkpointDir, null,
                type == NodeCommandType.CHECKPOINT ? Instant.now().plusSeconds(120) : null, Instant.now());
    }

    void send(NodeCommand command) {
        kafka.send(EventRecords.record(Topics.NODE_COMMANDS, command.nodeId(), command, "/test/scheduler"));
    }
}
