package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.scheduler.sim.trace.OpenbLoader;
import dev.gpucloud.scheduler.sim.trace.OpenbNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Alibaba's openb cluster built from its node list: one host per row with the row's CPU, memory and
 * GPUs, host id = the row's {@code sn}, instance type "openb-" + model, no RDMA fabric, no NVLink.
 * The trace gives no GPU memory; hosts get the model's nominal memory (G2 and G3 are anonymised and
 * get {@link #UNKNOWN_MODEL_MEMORY_MIB}); no openb pod asks for GPU memory.
 */
public final class OpenbCluster {

    /** Nominal GPU memory by openb model name, MiB. */
    public static final Map<String, Long> GPU_MEMORY_MIB = Map.of(
            "P100", 16_384L, "T4", 16_384L, "V100M16", 16_384L, "V100M32", 32_768L, "A10", 24_576L);
    public static final long UNKNOWN_MODEL_MEMORY_MIB = 16_384;

    private OpenbCluster() {
    }

    /** Loads the node list (strictly: a malformed row fails the load) and builds the cluster. */
    public static ClusterModel fromNodeList(Path nodeList) {
        return fromNodes("openb", OpenbLoader.loadNodes(nodeList).items());
    }

    public static ClusterModel fromNodes(String name, List<OpenbNode> nodes) {
        List<HostInventory> hosts = new ArrayList<>(nodes.size());
        for (OpenbNode node : nodes) {
            long memory = GPU_MEMORY_MIB.getOrDefault(node.model(), UNKNOWN_MODEL_MEMORY_MIB);
            List<GpuDevice> gpus = new ArrayList<>();
            for (int g = 0; g < node.gpus(); g++) {
                gpus.add(ClusterModel.gpu(node.name(), g, node.model(), memory, -1));
            }
            hosts.add(new HostInventory(node.name(), node.name(), "openb-" + node.model(), "openb",
                    CapacityType.ON_DEMAND, 0, node.cpuMilli(), node.memoryMib(), null, List.of(), gpus, List.of(),
                    ClusterModel.BACKEND, ClusterModel.SIM_EPOCH));
        }
        return new ClusterModel(name, hosts);
    }
}
