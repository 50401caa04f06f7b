package dev.gpucloud.scheduler.framework.plugins;

import dev.gpucloud.scheduler.cluster.NodeState;
import dev.gpucloud.scheduler.framework.CycleState;
import dev.gpucloud.scheduler.framework.PlacementRequest;
import dev.gpucloud.scheduler.framework.Plugins;
import dev.gpucloud.scheduler.framework.Status;

/**
 * Healthy hosts only: heard from within the heartbeat timeout, not draining, no interruption
 * notice or rebalance recommendation pending, no critical XID within the quarantine window.
 */
public final class HealthFilter implements Plugins.Filter {

    public static final String NAME = "Health";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Status filter(CycleState state, PlacementRequest r, NodeState node) {
        long now = state.nowMillis();
        if (node.cordon() != null) {
            return Status.unschedulable(NAME, "cordoned by an operator");
        }
        if (node.draining()) {
            return Status.unschedulable(NAME, "draining");
        }
        if (node.interruptionDeadlineMillis() != NodeState.NEVER) {
            return Status.unschedulable(NAME, "spot interruption notice");
        }
        if (node.rebalanceAtMillis() != NodeState.NEVER) {
            return Status.unschedulable(NAME, "rebalance recommended");
        }
        if (node.lastHeardMillis() == NodeState.NEVER
                || now - state.fleet().placementHeardMillis(node) > state.profile().heartbeatTimeoutMillis()) {
            return Status.unschedulable(NAME, "no heartbeat lately (host may be gone)");
        }
        if (node.lastCriticalXidMillis() != NodeState.NEVER
                && now - node.lastCriticalXidMillis() < state.profile().xidQuarantineMillis()) {
            return Status.unschedulable(NAME, "recent critical XID " + node.lastCriticalXid());
        }
        return Status.SUCCESS;
    }
}
