package dev.gpucloud.geometry;

/**
 * Whether one GPU can take one more allocation, the rule the scheduler places by and the agent
 * re-checks with. A GPU not in MIG mode is held whole (by one allocation) or shared in milli-GPUs (up
 * to {@value #WHOLE_GPU_MILLI} in all); a GPU in MIG mode is handed out only by its instances, each at a
 * legal start of a profile its family offers, on memory slices (and, for {@code +me}, media engines) no
 * other held instance takes.
 */
public final class GpuAdmission {

    /** A whole GPU in milli-GPUs. */
    public static final int WHOLE_GPU_MILLI = 1000;

    /** The answer: admitted, or the one reason it is not. */
    public enum Verdict {
        ADMITTED,
        /** Whole or shared work asked of a GPU in MIG mode. */
        IN_MIG_MODE,
        /** A MIG slot asked of a GPU not in MIG mode. */
        NOT_IN_MIG_MODE,
        /** A whole GPU asked of a GPU that holds something. */
        HELD,
        /** A share asked of a GPU without that many milli-GPUs free. */
        TOO_LITTLE_FREE,
        /** A MIG profile the GPU's family does not offer. */
        PROFILE_NOT_OFFERED,
        /** A start NVIDIA's placements do not allow for the profile. */
        START_NOT_ALLOWED,
        /** Memory slices the slot needs are held. */
        SLICES_HELD,
        /** A +me slot on a GPU whose media engines another instance holds. */
        MEDIA_ENGINES_HELD;

        public boolean admitted() {
            return this == ADMITTED;
        }
    }

    private GpuAdmission() {
    }

    /**
     * Whole ({@code milli} = {@value #WHOLE_GPU_MILLI}) or shared work on a GPU with {@code usedMilli}
     * held; {@code mig} is its MIG family, null when it is not in MIG mode.
     */
    public static Verdict share(MigFamily mig, int usedMilli, int milli) {
        if (mig != null) {
            return Verdict.IN_MIG_MODE;
        }
        if (milli >= WHOLE_GPU_MILLI) {
            return usedMilli > 0 ? Verdict.HELD : Verdict.ADMITTED;
        }
        return usedMilli + milli > WHOLE_GPU_MILLI ? Verdict.TOO_LITTLE_FREE : Verdict.ADMITTED;
    }

    /** {@link #share} as a yes or no, for the scheduler's inner loops. */
    public static boolean shareFits(MigFamily mig, int usedMilli, int milli) {
        return share(mig, usedMilli, milli) == Verdict.ADMITTED;
    }

    /**
     * A MIG instance of {@code profileName} at {@code start} on a GPU of family {@code mig} (null: not in
     * MIG mode) whose held instances occupy {@code heldMask} (see {@link MigFamily#occupancy}).
     */
    public static Verdict slot(MigFamily mig, String profileName, int start, int heldMask) {
        if (mig == null) {
            return Verdict.NOT_IN_MIG_MODE;
        }
        MigProfile profile = mig.profile(profileName).orElse(null);
        if (profile == null) {
            return Verdict.PROFILE_NOT_OFFERED;
        }
        if (!profile.allows(start)) {
            return Verdict.START_NOT_ALLOWED;
        }
        int needs = mig.occupancy(profile, start);
        if ((heldMask & needs & mig.fullMask()) != 0) {
            return Verdict.SLICES_HELD;
        }
        return (heldMask & needs) != 0 ? Verdict.MEDIA_ENGINES_HELD : Verdict.ADMITTED;
    }
}
