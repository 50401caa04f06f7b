package dev.gpucloud.agent.messaging;

import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * Knows which node.commands partitions this agent reads. On assignment it resolves each partition's
 * starting position at once, so a command sent after the agent reports ready is never skipped by
 * the "latest" reset.
 */
@ApplicationScoped
@Identifier(CommandsAssignment.NAME)
public class CommandsAssignment implements KafkaConsumerRebalanceListener {

    public static final String NAME = "node-commands-assignment";

    private static final Logger LOG = Logger.getLogger(CommandsAssignment.class);

    private final Set<TopicPartition> assigned = ConcurrentHashMap.newKeySet();

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        for (TopicPartition partition : partitions) {
            consumer.position(partition);
        }
        assigned.addAll(partitions);
        LOG.infof("reading node.commands partitions %s", new TreeSet<>(partitions.stream().map(TopicPartition::partition).toList()));
    }

    @Override
    public void onPartitionsRevoked(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        assigned.removeAll(partitions);
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        assigned.removeAll(partitions);
    }

    /** The partitions read now. */
    public Set<TopicPartition> assigned() {
        return Set.copyOf(assigned);
    }
}
