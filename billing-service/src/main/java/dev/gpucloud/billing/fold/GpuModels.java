package dev.gpucloud.billing.fold;

/** GPU model names as node agents report them (NVML's product names, shortened the fleet's way). */
public final class GpuModels {
    public static final String A100_40GB = "A100-SXM4-40GB";
    public static final String H100_80GB = "H100-SXM5-80GB";
    public static final String A10G = "A10G";
    public static final String V100_16GB = "V100-SXM2-16GB";

    private GpuModels() {
    }
}
