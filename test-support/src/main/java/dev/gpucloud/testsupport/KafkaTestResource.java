package dev.gpucloud.testsupport;

import dev.gpucloud.contracts.kafka.TopicProvisioner;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * A real Kafka broker for @QuarkusTest, found in this order: the address in KAFKA_BOOTSTRAP_SERVERS;
 * a container through Testcontainers when a Docker engine is reachable; else the project's own broker
 * (deploy/local/kafka.sh start). Every gpucloud topic exists before the application starts.
 */
public class KafkaTestResource implements QuarkusTestResourceLifecycleManager {

    private KafkaContainer container;

    @Override
    public Map<String, String> start() {
        String bootstrap = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        if (bootstrap == null || bootstrap.isBlank()) {
            bootstrap = dockerReachable() ? startContainer() : startLocalBroker();
        }
        try {
            TopicProvisioner.ensureTopics(bootstrap);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create gpucloud topics on " + bootstrap, e);
        }
        return Map.of("kafka.bootstrap.servers", bootstrap);
    }

    private static boolean dockerReachable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) {
            return false;
        }
    }

    private String startContainer() {
        container = new KafkaContainer("apache/kafka:" + kafkaVersion());
        container.start();
        return container.getBootstrapServers();
    }

    private static String startLocalBroker() {
        String port = LocalStack.env("KAFKA_PORT", "9092");
        if (!LocalStack.answers("localhost", Integer.parseInt(port))) {
            LocalStack.run("kafka.sh", "start");
        }
        return "localhost:" + port;
    }

    private static String kafkaVersion() {
        return org.apache.kafka.common.utils.AppInfoParser.getVersion();
    }

    @Override
    public void stop() {
        if (container != null) {
            container.stop();
        }
    }
}
