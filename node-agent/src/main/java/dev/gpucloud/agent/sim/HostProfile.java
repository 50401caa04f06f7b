package dev.gpucloud.agent.sim;

import java.util.List;
import java.util.Optional;

/**
 * A kind of simulated host, named as in a fleet spec ("a100x8"): the cloud instance type it stands
 * for, its GPUs, CPU and memory, its hourly prices, and the RDMA fabric it sits on (null: none).
 * On-demand prices are the project's reference figures; spot prices other than the V100's are
 * illustrative (about 40 % of on-demand).
 */
public record HostProfile(
        String name,
        String nodeStem,
        GpuModel model,
        int gpuCount,
        String instanceType,
        int vcpus,
        long memoryGib,
        long onDemandMicrosPerHour,
        long spotMicrosPerHour,
        String rdmaFabric,
        boolean nvlink) {

    public static final HostProfile A100X8 = new HostProfile("a100x8", "a100", GpuModel.A100_SXM4_40GB, 8,
            "p4d.24xlarge", 96, 1152, 21_960_000, 8_784_000, "a", true);
    public static final HostProfile H100X8 = new HostProfile("h100x8", "h100", GpuModel.H100_SXM5_80GB, 8,
            "p5.48xlarge", 192, 2048, 55_040_000, 22_016_000, "b", true);
    public static final HostProfile A10G = new HostProfile("a10g", "a10g", GpuModel.A10G, 1,
            "g5.xlarge", 4, 16, 1_006_000, 402_400, null, false);
    public static final HostProfile V100 = new HostProfile("v100", "v100", GpuModel.V100_SXM2_16GB, 1,
            "p3.2xlarge", 8, 61, 3_060_000, 930_000, null, false);

    public static final List<HostProfile> CATALOG = List.of(A100X8, H100X8, A10G, V100);

    public static Optional<HostProfile> byName(String name) {
        return CATALOG.stream().filter(p -> p.name.equals(name)).findFirst();
    }
}
