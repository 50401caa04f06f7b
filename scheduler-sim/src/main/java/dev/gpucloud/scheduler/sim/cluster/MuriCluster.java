package dev.gpucloud.scheduler.sim.cluster;

import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.contracts.events.HostInventory;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster of Muri's published runs: 8 hosts of 8 GPUs (64 GPUs) under one switch. The trace has no
 * GPU type, so the model only names the GPUs; each host's 8 GPUs form one NVLink island and all hosts
 * share one RDMA fabric, so a job of more than 8 GPUs can span whole hosts.
 */
public final class MuriCluster {

    public static final int HOSTS = 8;
    public static final int GPUS_PER_HOST = 8;
    public static final String FABRIC = "muri-switch";
    public static final String GPU_MODEL = GpuModels.V100_SXM2_16GB;
    private static final long GPU_MEMORY_MIB = 16_384;
    private static final int CPU_MILLIS = 64_000;
    private static final long MEMORY_MIB = 512 * 1024;

    private MuriCluster() {
    }

    /** The 64-GPU cluster; host ids muri-0 .. muri-7. */
    public static ClusterModel build() {
        List<HostInventory> hosts = new ArrayList<>();
        for (int h = 0; h < HOSTS; h++) {
            String id = "muri-" + h;
            List<GpuDevice> gpus = new ArrayList<>();
            for (int g = 0; g < GPUS_PER_HOST; g++) {
                gpus.add(ClusterModel.gpu(id, g, GPU_MODEL, GPU_MEMORY_MIB, 0));
            }
            hosts.add(new HostInventory(id, id, "muri-8gpu", "muri", CapacityType.ON_DEMAND, 0, CPU_MILLIS,
                    MEMORY_MIB, FABRIC, List.of(FABRIC), gpus, List.of(), ClusterModel.BACKEND,
                    ClusterModel.SIM_EPOCH));
        }
        return new ClusterModel("muri-64", hosts);
    }
}
