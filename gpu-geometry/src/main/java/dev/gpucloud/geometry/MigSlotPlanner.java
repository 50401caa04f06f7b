package dev.gpucloud.geometry;

import java.util.ArrayList;
import java.util.List;

/**
 * What the agent does for a MIG slot on one GPU: run on the instance of that profile already at that
 * start, or create one, first destroying the idle instances in its way; refused (by
 * {@link GpuAdmission#slot}) where a held instance is in the way.
 */
public final class MigSlotPlanner {

    /** An instance the GPU has: its id, profile, start (null when unknown), and whether an allocation holds it. */
    public record Instance(String id, String profile, Integer start, boolean held) {
    }

    /**
     * The plan: {@code verdict} ADMITTED with either {@code reuse} or (when that is null) the instances to
     * {@code destroy} before creating {@code profile} at {@code start}; or a refusal, with the held instance
     * in the way ({@code blocking}) where there is one.
     */
    public record Plan(GpuAdmission.Verdict verdict, MigProfile profile, int start, Instance reuse,
            List<Instance> destroy, Instance blocking) {

        public Plan {
            destroy = List.copyOf(destroy);
        }

        /** True when the slot needs a new instance. */
        public boolean creates() {
            return verdict.admitted() && reuse == null;
        }
    }

    private MigSlotPlanner() {
    }

    /** The plan for {@code slot} on a GPU of family {@code mig} (null: not in MIG mode) that has {@code instances}. */
    public static Plan plan(MigFamily mig, MigSlot slot, List<Instance> instances) {
        MigProfile profile = mig == null ? null : mig.profile(slot.profile()).orElse(null);
        int held = 0;
        if (mig != null) {
            for (Instance i : instances) {
                if (i.held() && !sameSlot(i, slot)) {
                    held |= mig.occupancy(i.profile(), i.start());
                }
            }
        }
        GpuAdmission.Verdict verdict = GpuAdmission.slot(mig, slot.profile(), slot.start(), held);
        if (!verdict.admitted()) {
            return new Plan(verdict, profile, slot.start(), null, List.of(), blocking(mig, profile, slot, instances));
        }
        for (Instance i : instances) {
            if (sameSlot(i, slot)) {
                return i.held() ? new Plan(GpuAdmission.Verdict.SLICES_HELD, profile, slot.start(), null, List.of(), i)
                        : new Plan(verdict, profile, slot.start(), i, List.of(), null);
            }
        }
        int needs = mig.occupancy(profile, slot.start());
        List<Instance> inTheWay = new ArrayList<>();
        for (Instance i : instances) {
            if ((mig.occupancy(i.profile(), i.start()) & needs) != 0) {
                inTheWay.add(i);
            }
        }
        return new Plan(verdict, profile, slot.start(), null, inTheWay, null);
    }

    private static boolean sameSlot(Instance i, MigSlot slot) {
        return i.profile().equals(slot.profile()) && i.start() != null && i.start() == slot.start();
    }

    private static Instance blocking(MigFamily mig, MigProfile profile, MigSlot slot, List<Instance> instances) {
        if (profile == null || !profile.allows(slot.start())) {
            return null;
        }
        int needs = mig.occupancy(profile, slot.start());
        for (Instance i : instances) {
            if (i.held() && (mig.occupancy(i.profile(), i.start()) & needs) != 0) {
                return i;
            }
        }
        return null;
    }
}
