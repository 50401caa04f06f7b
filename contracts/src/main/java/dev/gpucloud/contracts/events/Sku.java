package dev.gpucloud.contracts.events;

import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
/**
 * What is billed: a whole GPU of a model (milliGpu 1000), one MIG slice of it (migProfile set), or a
 * share of one GPU in milli-GPUs (1..999).
 */
public record Sku(String gpuModel, String migProfile, int milliGpu) {
    public static final int WHOLE_GPU = 1000;

    public Sku {
        Check.text(gpuModel, Limits.GPU_MODEL, "sku.gpuModel");
        Check.optionalText(migProfile, Limits.MIG_PROFILE, "sku.migProfile");
        Require.atLeast(milliGpu, 1, "milliGpu");
        if (milliGpu > WHOLE_GPU) {
            throw new IllegalArgumentException("field 'milliGpu' must be <= 1000, was " + milliGpu);
        }
        if (migProfile != null && migProfile.isBlank()) {
            migProfile = null;
        }
    }

    public static Sku wholeGpu(String gpuModel) {
        return new Sku(gpuModel, null, WHOLE_GPU);
    }

    /** A stable text form, e.g. "A100-SXM4-40GB", "A100-SXM4-40GB/mig-1g.10gb", "A40/125m". */
    public String code() {
        if (migProfile != null) {
            return gpuModel + "/mig-" + migProfile;
        }
        return milliGpu == WHOLE_GPU ? gpuModel : gpuModel + "/" + milliGpu + "m";
    }
}
