package dev.gpucloud.metrics.exporter;

import dev.gpucloud.metrics.config.MetricsConfig;
import dev.gpucloud.metrics.gpu.GpuFleet;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import org.jboss.logging.Logger;

/** A host that crashed sends no tombstone: its series go once it has been quiet for stale-after. */
@ApplicationScoped
public class StaleHostSweeper {

    private static final Logger LOG = Logger.getLogger(StaleHostSweeper.class);

    private final GpuFleet fleet;
    private final MetricsConfig config;

    public StaleHostSweeper(GpuFleet fleet, MetricsConfig config) {
        this.fleet = fleet;
        this.config = config;
    }

    @Scheduled(every = "${gpucloud.metrics.sweep-interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        for (String nodeId : fleet.expire(Instant.now(), config.staleAfter())) {
            LOG.infof("host %s went quiet: no telemetry for %ds, its series were removed", nodeId,
                    config.staleAfter().toSeconds());
        }
    }
}
