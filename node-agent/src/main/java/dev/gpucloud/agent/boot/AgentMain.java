package dev.gpucloud.agent.boot;

import dev.gpucloud.contracts.kafka.EnrolmentClient;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import java.io.IOException;

/**
 * The node agent's entry point: enrols first where it runs on Kubernetes ({@link BootEnrolment}), because the Kafka
 * login the scheduler answers must be in the configuration before Quarkus makes the agent's Kafka clients; an
 * interceptor or a bean would come too late for the consumer and the producer alike. Then boots Quarkus as usual.
 */
@QuarkusMain
public final class AgentMain {

    private AgentMain() {
    }

    public static void main(String... args) {
        try {
            EnrolmentClient.Answer enrolled = BootEnrolment.enrol(System.getenv());
            if (enrolled != null) {
                BootEnrolment.apply(enrolled);
            }
        } catch (IOException | IllegalArgumentException e) {
            // Kubernetes restarts the container (with its back-off): a refusal is the scheduler's final word
            System.err.println("node-agent: cannot enrol at the scheduler, not starting: " + e.getMessage());
            System.exit(1);
        }
        Quarkus.run(args);
    }
}
