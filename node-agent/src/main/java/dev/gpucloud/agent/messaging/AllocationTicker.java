package dev.gpucloud.agent.messaging;

import dev.gpucloud.agent.runner.AllocationRunner;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Moves running allocations forward once a second: runs that finished exit, checkpoints that
 * finished saving are reported, and usage intervals that ended are sent. Events carry the times
 * they happened at, not the tick's.
 */
@ApplicationScoped
public class AllocationTicker {

    private static final Logger LOG = Logger.getLogger(AllocationTicker.class);

    private final AllocationRunner runner;
    private final EventPublisher publisher;

    public AllocationTicker(AllocationRunner runner, EventPublisher publisher) {
        this.runner = runner;
        this.publisher = publisher;
    }

    @Scheduled(identity = "allocation-tick", every = "1s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    void tick() {
        publisher.publish(runner.advance())
                .subscribe().with(ok -> { }, e -> LOG.errorf(e, "allocation reports not sent: %s", e.getMessage()));
    }
}
