package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.config.AgentConfig;
import dev.gpucloud.agent.logs.LogShipper;
import dev.gpucloud.agent.runner.AllocationRunner;
import dev.gpucloud.agent.runner.ProcessRunner;
import dev.gpucloud.agent.sim.SimulatedFleet;
import dev.gpucloud.contracts.events.Topics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * Ships what the workers of this agent's runner write to {@code job.logs} ({@link LogShipper}): a process runner's
 * workers' stdout and stderr, and the few lines a simulated worker says. Starts with the agent, after taking up what
 * an earlier run of it left unshipped in the run folder.
 */
@ApplicationScoped
public class JobOutput {

    private static final Logger LOG = Logger.getLogger(JobOutput.class);

    @Inject
    AgentConfig config;
    @Inject
    AllocationRunner runner;
    @Inject
    EventPublisher publisher;
    @Inject
    MeterRegistry registry;
    @Inject
    Clock clock;

    private LogShipper shipper;

    void onStart(@Observes StartupEvent event) {
        AgentConfig.Logs logs = config.logs();
        if (!logs.enabled()) {
            LOG.info("workers' output is not shipped (gpucloud.agent.logs.enabled=false)");
            return;
        }
        LogShipper.Settings settings = new LogShipper.Settings(logs.poll(), logs.bytesPerSecond(), logs.backlogLimit(),
                logs.tailWait(), Duration.ofSeconds(30));
        shipper = new LogShipper(chunk -> publisher.send(EventPublisher.record(Topics.JOB_LOGS, chunk.jobId(), chunk,
                chunk.nodeId())).subscribeAsCompletionStage(), settings, clock, LOG::warn);
        Path dir = runDir(config);
        if (runner instanceof ProcessRunner process) {
            process.watchOutput(shipper);
        } else if (runner instanceof SimulatedFleet fleet && logs.simulated()) {
            fleet.watchOutput(shipper, dir);
        } else {
            LOG.info("simulated workers say nothing (gpucloud.agent.logs.simulated=false)");
            return;
        }
        shipper.recover(dir);
        shipper.start();
        LOG.infof("shipping workers' output from %s to %s (%s per worker, backlog limit %s)", dir,
                Topics.JOB_LOGS.name(), LogShipper.size(logs.bytesPerSecond()) + "/s",
                LogShipper.size(logs.backlogLimit()));
        Gauge.builder("gpucloud_agent_log_backlog_bytes", shipper, LogShipper::backlogBytes)
                .description("Output workers wrote that job.logs has not acknowledged yet").register(registry);
        FunctionCounter.builder("gpucloud_agent_log_lines_sent", shipper, LogShipper::linesSent)
                .description("Lines of workers' output acknowledged by job.logs").register(registry);
        FunctionCounter.builder("gpucloud_agent_log_bytes_sent", shipper, LogShipper::bytesSent)
                .description("Bytes of workers' output acknowledged by job.logs").register(registry);
        FunctionCounter.builder("gpucloud_agent_log_dropped_bytes", shipper, LogShipper::droppedBytes)
                .description("Bytes of workers' output skipped because they wrote faster than their limit")
                .register(registry);
        FunctionCounter.builder("gpucloud_agent_log_send_failures", shipper, LogShipper::failedSends)
                .description("Sends of log chunks that failed and were retried").register(registry);
    }

    void onShutdown(@Observes ShutdownEvent event) {
        if (shipper != null) {
            shipper.close();
        }
    }

    /** The runner's folder: one working directory per allocation, with its output files. */
    static Path runDir(AgentConfig config) {
        return config.runner().dir().filter(d -> !d.isBlank()).map(Path::of)
                .orElse(Path.of(System.getProperty("java.io.tmpdir"), "gpucloud-agent-" + config.id(), "runs"));
    }
}
