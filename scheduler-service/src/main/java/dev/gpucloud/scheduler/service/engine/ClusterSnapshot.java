package dev.gpucloud.scheduler.service.engine;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.scheduler.cluster.ClusterState;
import dev.gpucloud.scheduler.cluster.Host;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A copy of the cluster model taken between two operations, for the ClusterService API. */
public record ClusterSnapshot(List<Host> hosts, Map<String, Map<Integer, String>> holders) {

    static ClusterSnapshot of(ClusterState cluster) {
        Map<String, Map<Integer, String>> holders = new HashMap<>();
        for (Host host : cluster.hosts()) {
            Map<Integer, String> byGpu = new HashMap<>();
            for (GpuDevice gpu : host.gpus()) {
                cluster.holderOf(host.nodeId(), gpu.index()).ifPresent(a -> byGpu.put(gpu.index(), a));
            }
            holders.put(host.nodeId(), byGpu);
        }
        return new ClusterSnapshot(List.copyOf(cluster.hosts()), holders);
    }

    /** The allocation holding a GPU, or null when it is free. */
    public String holder(String nodeId, int gpu) {
        return holders.getOrDefault(nodeId, Map.of()).get(gpu);
    }
}
