package dev.gpucloud.billing.messaging;

import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Named by {@code mp.messaging.incoming.usage-in.consumer-rebalance-listener.name}: seeks newly assigned
 * partitions to the offsets stored with the folded usage, writes the folded usage of revoked ones first, and
 * drops lost ones. Runs on the consumer's polling thread, where blocking is allowed.
 */
@ApplicationScoped
@Identifier(FoldRebalanceListener.NAME)
public class FoldRebalanceListener implements KafkaConsumerRebalanceListener {

    static final String NAME = "billing-fold";

    private final UsageConsumer consumer;

    public FoldRebalanceListener(UsageConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> kafkaConsumer, Collection<TopicPartition> partitions) {
        consumer.assigned(kafkaConsumer, partitions);
    }

    @Override
    public void onPartitionsRevoked(Consumer<?, ?> kafkaConsumer, Collection<TopicPartition> partitions) {
        consumer.revoked(partitions);
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> kafkaConsumer, Collection<TopicPartition> partitions) {
        consumer.lost(partitions);
    }
}
