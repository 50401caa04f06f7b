package dev.gpucloud.contracts.events;

/**
 * GPU model names as node agents report them in {@link GpuDevice#model()} and billing prices them:
 * NVIDIA's product name with its form factor and memory. Agents, the scheduler's job specs and the
 * price catalog must agree on these strings.
 */
public final class GpuModels {
    /** NVIDIA A100 SXM4 40 GB (AWS p4d.24xlarge has eight). */
    public static final String A100_SXM4_40GB = "A100-SXM4-40GB";
    /** NVIDIA H100 SXM5 80 GB (AWS p5.48xlarge has eight). */
    public static final String H100_SXM5_80GB = "H100-SXM5-80GB";
    /** NVIDIA A10G 24 GB (AWS g5.xlarge has one). */
    public static final String A10G = "A10G";
    /** NVIDIA V100 SXM2 16 GB (AWS p3.2xlarge has one). */
    public static final String V100_SXM2_16GB = "V100-SXM2-16GB";

    private GpuModels() {
    }
}
