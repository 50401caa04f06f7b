package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.ProcessRunner;
import dev.gpucloud.agent.runner.Reports;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * When the agent shuts down, the workloads it runs as processes are stopped (SIGTERM, the grace,
 * SIGKILL), and their EXITED events and last usage are written to the spool before the agent goes:
 * they reach Kafka now, or from the spool at the next start.
 */
@ApplicationScoped
public class RunnerShutdown {

    private static final Logger LOG = Logger.getLogger(RunnerShutdown.class);

    private final AllocationRunner runner;
    private final EventPublisher publisher;
    private final AgentConfig config;

    public RunnerShutdown(AllocationRunner runner, EventPublisher publisher, AgentConfig config) {
        this.runner = runner;
        this.publisher = publisher;
        this.config = config;
    }

    /** Runs before the spool's own shutdown observer (a lower priority value comes first). */
    void onShutdown(@Observes @Priority(100) ShutdownEvent event) {
        if (!(runner instanceof ProcessRunner process) || process.running().isEmpty()) {
            return;
        }
        Duration grace = config.runner().stopGrace().compareTo(Duration.ofSeconds(20)) > 0
                ? Duration.ofSeconds(20) : config.runner().stopGrace();
        LOG.warnf("agent shutting down: stopping %d workload(s), %s grace", process.running().size(), grace);
        try {
            Reports reports = process.stopAll(grace);
            publisher.publish(reports).await().atMost(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            LOG.errorf(e, "could not report the workloads stopped at shutdown: %s", e.getMessage());
        }
    }
}
