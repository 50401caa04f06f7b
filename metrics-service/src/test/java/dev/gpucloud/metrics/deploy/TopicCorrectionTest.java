package dev.gpucloud.metrics.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.kafka.TopicProvisioner;
import dev.gpucloud.testsupport.KafkaTestResource;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

/**
 * A topic that exists as a consumer's request auto-created it (the broker's partition count, delete policy) is
 * corrected to what it is declared as: partitions added, the cleanup policy set; one already right is left alone.
 */
class TopicCorrectionTest {

    @Test
    void a_topic_made_with_the_brokers_defaults_gets_its_partitions_and_policy() throws Exception {
        String bootstrap = new KafkaTestResource().start().get("kafka.bootstrap.servers");
        String name = "test-correction-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1)
                    .configs(Map.of("cleanup.policy", "delete")))).all().get(30, TimeUnit.SECONDS);
            awaitMetadata(admin, name);
            NewTopic declared = new NewTopic(name, 4, (short) 1).configs(Map.of("cleanup.policy", "compact"));

            assertThat(TopicProvisioner.correct(admin, List.of(declared)))
                    .containsExactly(name + ": 1 -> 4 partitions", name + ": cleanup.policy delete -> compact");
            assertThat(admin.describeTopics(List.of(name)).allTopicNames().get(30, TimeUnit.SECONDS).get(name)
                    .partitions()).hasSize(4);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
            assertThat(admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                    .get("cleanup.policy").value()).isEqualTo("compact");
            assertThat(TopicProvisioner.correct(admin, List.of(declared))).isEmpty();
            admin.deleteTopics(List.of(name)).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** A topic just created is not yet known to every part of the broker: wait until it describes. */
    private static void awaitMetadata(Admin admin, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                admin.describeTopics(List.of(name)).allTopicNames().get(5, TimeUnit.SECONDS);
                ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
                admin.describeConfigs(List.of(resource)).all().get(5, TimeUnit.SECONDS);
                return;
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(name + " was created but never described", e);
                }
                Thread.sleep(100);
            }
        }
    }
}
