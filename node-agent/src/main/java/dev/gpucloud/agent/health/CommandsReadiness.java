package dev.gpucloud.agent.health;

import dev.gpucloud.agent.messaging.CommandsAssignment;
import io.smallrye.common.annotation.Identifier;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** The agent is ready once it reads node.commands: before that, a command sent to it could be missed. */
@Readiness
@ApplicationScoped
public class CommandsReadiness implements HealthCheck {

    private final CommandsAssignment assignment;

    public CommandsReadiness(@Identifier(CommandsAssignment.NAME) CommandsAssignment assignment) {
        this.assignment = assignment;
    }

    @Override
    public HealthCheckResponse call() {
        var partitions = assignment.assigned().stream().map(TopicPartition::partition).sorted().toList();
        return HealthCheckResponse.named("node.commands assigned")
                .status(!partitions.isEmpty())
                .withData("partitions", partitions.toString())
                .build();
    }
}
