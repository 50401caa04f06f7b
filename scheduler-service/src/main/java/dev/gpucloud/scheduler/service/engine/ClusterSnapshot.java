package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.scheduler.cluster.Assignment;
import dev.gpucloud.scheduler.cluster.Fleet;
import dev.gpucloud.scheduler.cluster.GpuState;
import dev.gpucloud.scheduler.cluster.NodeState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** A copy of the cluster model taken between two operations, for the ClusterService API. */
public record ClusterSnapshot(List<NodeView> nodes) {

    /** One GPU: what it is, how much of it is in use (milli; MIG slices as memory slices) and by whom. */
    public record GpuView(int index, String uuid, String model, long memoryMib, int nvlinkIsland, boolean mig,
            int usedMilli, int migSlicesUsed, int migSlices, List<String> holders) {
    }

    /**
     * One host with its GPUs and health; {@code cordonReason} is why an operator cordoned or drained it (null: none
     * did).
     */
    public record NodeView(String nodeId, String hostname, String instanceType, String zone, CapacityType capacityType,
            String rdmaFabric, long priceMicrosPerHour, boolean healthy, boolean draining, String cordonReason,
            Instant lastSeen, List<GpuView> gpus) {
    }

    static ClusterSnapshot of(Fleet fleet, long nowMillis, long hostTimeoutMillis) {
        return page(fleet, nowMillis, hostTimeoutMillis, null, "", Integer.MAX_VALUE);
    }

    /**
     * At most {@code limit} hosts in id order (the fleet's), after {@code afterNodeId} (null: from the first),
     * with a GPU of {@code gpuModel} (empty: any): one ListNodes page copies only its own hosts, not the fleet.
     */
    static ClusterSnapshot page(Fleet fleet, long nowMillis, long hostTimeoutMillis, String afterNodeId,
            String gpuModel, int limit) {
        List<NodeView> nodes = new ArrayList<>(Math.min(limit, fleet.size()));
        for (NodeState n : fleet.nodes()) {
            if (nodes.size() == limit) {
                break;
            }
            if (afterNodeId != null && n.id().compareTo(afterNodeId) <= 0 || !gpuModel.isEmpty() && !has(n, gpuModel)) {
                continue;
            }
            nodes.add(view(fleet, n, nowMillis, hostTimeoutMillis));
        }
        return new ClusterSnapshot(List.copyOf(nodes));
    }

    /** Host {@code n} of {@code fleet} as the API shows it. */
    static NodeView view(Fleet fleet, NodeState n, long nowMillis, long hostTimeoutMillis) {
        List<Assignment> held = fleet.assignmentsOn(n.id());
        List<GpuView> gpus = new ArrayList<>(n.gpuCount());
        for (int i = 0; i < n.gpuCount(); i++) {
            GpuState g = n.gpu(i);
            List<String> holders = held.stream().filter(a -> a.gpuIndices().contains(g.index()))
                    .map(Assignment::allocationId).toList();
            gpus.add(new GpuView(g.index(), g.uuid(), g.model(), g.memoryMib(), g.island(), g.mig() != null,
                    g.usedMilli(), g.mig() == null ? 0 : g.mig().slicesUsed(g.migMask()),
                    g.mig() == null ? 0 : g.mig().memorySlices(), holders));
        }
        boolean fresh = n.lastHeardMillis() != NodeState.NEVER && nowMillis - n.lastHeardMillis() <= hostTimeoutMillis;
        boolean healthy = fresh && !n.draining() && n.interruptionDeadlineMillis() == NodeState.NEVER
                && n.rebalanceAtMillis() == NodeState.NEVER;
        return new NodeView(n.id(), n.hostname(), n.instanceType(), n.zone(), n.capacityType(), n.fabric(),
                n.priceMicrosPerHour(), healthy, n.draining(), n.cordon(),
                n.lastHeardMillis() == NodeState.NEVER ? Instant.EPOCH : Instant.ofEpochMilli(n.lastHeardMillis()),
                gpus);
    }

    private static boolean has(NodeState n, String gpuModel) {
        for (int i = 0; i < n.gpuCount(); i++) {
            if (n.gpu(i).model().equals(gpuModel)) {
                return true;
            }
        }
        return false;
    }
}
