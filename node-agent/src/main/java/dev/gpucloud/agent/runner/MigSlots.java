package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand.MigSlot;
import dev.gpucloud.geometry.GpuAdmission;
import dev.gpucloud.geometry.MigFamily;
import dev.gpucloud.geometry.MigProfile;
import dev.gpucloud.geometry.MigSlotPlanner;
import dev.gpucloud.geometry.NvidiaMigTable;
import java.util.ArrayList;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Resolves a MIG slot a START names ({@code 3g.40gb@4}) on one GPU of a host, by gpu-geometry's
 * {@link MigSlotPlanner} (the same table and rule the scheduler placed it by): the instance of that
 * profile that already starts there, or a plan to create one where no busy instance is in the way
 * (the idle ones in the way are destroyed first). Refusals say why, in terms of this host's GPUs and
 * allocations. Shared by the simulated hosts and the process runner, so both refuse alike.
 */
public final class MigSlots {

    /** What a slot comes to: a problem, an instance to run on, or an instance to create first. */
    public record Plan(String problem, int gpuIndex, MigInstance existing, MigProfile profile, int start,
            List<MigInstance> destroy, List<String> heldBy) {

        public Plan {
            heldBy = heldBy == null ? List.of() : List.copyOf(heldBy);
        }

        Plan(String problem, int gpuIndex, MigInstance existing, MigProfile profile, int start,
                List<MigInstance> destroy) {
            this(problem, gpuIndex, existing, profile, start, destroy, List.of());
        }

        static Plan no(String problem) {
            return new Plan(problem, -1, null, null, -1, List.of());
        }

        /** True when the slot needs a new instance ({@link #profile} at {@link #start}, after {@link #destroy}). */
        public boolean creates() {
            return problem == null && existing == null;
        }
    }

    private MigSlots() {
    }

    /**
     * The plan for {@code slot} on the one GPU {@code gpuIndices} names; {@code holder} says which
     * allocation holds an instance (by UUID), null when it is idle.
     */
    public static Plan resolve(String nodeId, List<GpuDevice> gpus, List<Integer> gpuIndices, MigSlot slot,
            Function<String, String> holder) {
        if (gpuIndices.size() != 1) {
            return Plan.no("MIG slot " + slot + " needs exactly one GPU in gpuIndices, got " + gpuIndices);
        }
        int index = gpuIndices.get(0);
        if (index < 0 || index >= gpus.size()) {
            return Plan.no(GpuLedger.noSuchGpu(index, nodeId, gpus.size()));
        }
        GpuDevice gpu = gpus.get(index);
        String where = "GPU " + index + " (" + gpu.model() + ") on " + nodeId;
        if (!gpu.migEnabled()) {
            return Plan.no("MIG slot " + slot + ": " + where + " is not in MIG mode");
        }
        Optional<MigFamily> family = NvidiaMigTable.forGpu(gpu.model(), gpu.memoryMib());
        if (family.isEmpty()) {
            return Plan.no("MIG slot " + slot + ": " + where + " has no MIG profiles this agent knows");
        }
        Map<String, MigInstance> byUuid = new HashMap<>();
        List<MigSlotPlanner.Instance> instances = new ArrayList<>();
        for (MigInstance mig : gpu.migInstances()) {
            byUuid.put(mig.uuid(), mig);
            instances.add(new MigSlotPlanner.Instance(mig.uuid(), mig.profile(), mig.placementStart(),
                    holder.apply(mig.uuid()) != null));
        }
        MigSlotPlanner.Plan plan = MigSlotPlanner.plan(family.get(),
                new dev.gpucloud.geometry.MigSlot(slot.profile(), slot.start()), instances);
        MigInstance blocking = plan.blocking() == null ? null : byUuid.get(plan.blocking().id());
        String heldBy = blocking == null ? "an instance in use" : describe(blocking) + ", busy with "
                + holder.apply(blocking.uuid());
        boolean sameSlot = blocking != null && blocking.profile().equals(slot.profile())
                && Integer.valueOf(slot.start()).equals(blocking.placementStart());
        String problem = switch (plan.verdict()) {
            case ADMITTED -> null;
            case PROFILE_NOT_OFFERED -> "MIG slot " + slot + ": " + where + " has no MIG profile " + slot.profile()
                    + " (it has " + family.get().profiles().stream().map(MigProfile::name).sorted().toList() + ")";
            case START_NOT_ALLOWED -> "MIG slot " + slot + ": profile " + slot.profile() + " cannot start at slice "
                    + slot.start() + " (NVIDIA's placements for it: " + plan.profile().starts() + ")";
            case SLICES_HELD -> sameSlot
                    ? "MIG slot " + slot + " (" + blocking.uuid() + ") on " + where + " is busy with "
                            + holder.apply(blocking.uuid())
                    : "MIG slot " + slot + ": " + plan.profile().describeSlices(slot.start()) + " of " + where
                            + " overlap instance " + heldBy;
            case MEDIA_ENGINES_HELD -> "MIG slot " + slot + ": the media engines of " + where + " are held by instance "
                    + heldBy + " (one +me instance per GPU)";
            default -> "MIG slot " + slot + ": " + where + " refuses it (" + plan.verdict() + ")";
        };
        if (problem != null) {
            boolean held = plan.verdict() == GpuAdmission.Verdict.SLICES_HELD
                    || plan.verdict() == GpuAdmission.Verdict.MEDIA_ENGINES_HELD;
            String holderId = blocking == null ? null : holder.apply(blocking.uuid());
            return new Plan(problem, -1, null, null, -1, List.of(), held && holderId != null ? List.of(holderId)
                    : List.of());
        }
        if (!plan.creates()) {
            return new Plan(null, index, byUuid.get(plan.reuse().id()), plan.profile(), slot.start(), List.of());
        }
        return new Plan(null, index, null, plan.profile(), slot.start(),
                plan.destroy().stream().map(i -> byUuid.get(i.id())).toList());
    }

    /** "3g.40gb@4 (MIG-...)", or without the start where it is unknown. */
    public static String describe(MigInstance mig) {
        return mig.profile() + (mig.placementStart() == null ? "" : "@" + mig.placementStart()) + " (" + mig.uuid() + ")";
    }
}
