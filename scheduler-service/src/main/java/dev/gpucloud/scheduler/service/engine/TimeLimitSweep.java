package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.state.JobCommands;
import io.smallrye.mutiny.Uni;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The leader's look, every {@code time-limit-sweep}, for placed jobs past their time limit: memory knows when each
 * reaches it ({@code SchedulerState#pastTimeLimit}), so a sweep with nothing due reads nothing. Those due are
 * handed to {@link JobCommands#timeLimitReached} in one transaction, as any other command: asked for a last
 * checkpoint within {@code time-limit-grace} and then ended FAILED, or failed at once.
 */
final class TimeLimitSweep {

    private static final Logger LOG = Logger.getLogger(SchedulerEngine.class);

    private final Transactions txs;
    private final Memory memory;
    private final SchedulerConfig config;

    TimeLimitSweep(Transactions txs, Memory memory, SchedulerConfig config) {
        this.txs = txs;
        this.memory = memory;
        this.config = config;
    }

    /** Applies the limit to every placed job past it; returns how many there were. Runs only on the leader. */
    Uni<Integer> sweep() {
        return txs.operation(changes -> {
            long now = System.currentTimeMillis();
            List<String> due = memory.state.pastTimeLimit(now);
            if (due.isEmpty()) {
                return Uni.createFrom().item(0);
            }
            long deadline = now + config.timeLimitGrace().orElse(config.preemptionGrace()).toMillis();
            LOG.infof("%d job(s) reached their time limit: %s", due.size(), due.stream().limit(20).toList());
            return txs.tx(changes, w -> Transactions.inTurn(due, jobId -> w.reachTimeLimit(jobId, deadline, now)))
                    .replaceWith(due.size());
        });
    }
}
