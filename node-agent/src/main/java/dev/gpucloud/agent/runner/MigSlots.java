package dev.gpucloud.agent.runner;

import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand.MigSlot;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Resolves a MIG slot a START names ({@code 3g.40gb@4}) on one GPU of a host: the instance of that
 * profile that already starts there, or a plan to create one where no busy instance overlaps the
 * slices it needs (the idle ones in the way are destroyed first). Refuses a GPU not in MIG mode, a
 * profile the GPU's model does not have and a start NVIDIA's placement rules do not allow, saying
 * why. Shared by the simulated hosts and the process runner, so both refuse alike.
 */
public final class MigSlots {

    /** What a slot comes to: a problem, an instance to run on, or an instance to create first. */
    public record Plan(String problem, int gpuIndex, MigInstance existing, MigPlacements.Profile profile, int start,
            List<MigInstance> destroy) {

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
            return Plan.no("GPU " + index + " does not exist on " + nodeId + " (" + gpus.size() + " GPU"
                    + (gpus.size() == 1 ? ": 0)" : "s" + (gpus.size() == 0 ? ")" : ": 0.." + (gpus.size() - 1) + ")")));
        }
        GpuDevice gpu = gpus.get(index);
        String where = "GPU " + index + " (" + gpu.model() + ") on " + nodeId;
        if (!gpu.migEnabled()) {
            return Plan.no("MIG slot " + slot + ": " + where + " is not in MIG mode");
        }
        Optional<MigPlacements.Geometry> geometry = MigPlacements.of(gpu.model(), gpu.memoryMib());
        if (geometry.isEmpty()) {
            return Plan.no("MIG slot " + slot + ": " + where + " has no MIG profiles this agent knows");
        }
        Optional<MigPlacements.Profile> found = geometry.get().profile(slot.profile());
        if (found.isEmpty()) {
            return Plan.no("MIG slot " + slot + ": " + where + " has no MIG profile " + slot.profile() + " (it has "
                    + geometry.get().profiles().keySet().stream().sorted().toList() + ")");
        }
        MigPlacements.Profile profile = found.get();
        if (!profile.allows(slot.start())) {
            return Plan.no("MIG slot " + slot + ": profile " + profile.name() + " cannot start at slice " + slot.start()
                    + " (NVIDIA's placements for it: " + profile.starts() + ")");
        }
        for (MigInstance mig : gpu.migInstances()) {
            if (mig.profile().equals(profile.name()) && Integer.valueOf(slot.start()).equals(mig.placementStart())) {
                String busy = holder.apply(mig.uuid());
                if (busy != null) {
                    return Plan.no("MIG slot " + slot + " (" + mig.uuid() + ") on " + where + " is busy with " + busy);
                }
                return new Plan(null, index, mig, profile, slot.start(), List.of());
            }
        }
        int from = slot.start();
        int to = slot.start() + profile.size();
        List<MigInstance> inTheWay = new ArrayList<>();
        for (MigInstance mig : gpu.migInstances()) {
            if (!overlaps(geometry.get(), mig, from, to)) {
                continue;
            }
            String busy = holder.apply(mig.uuid());
            if (busy != null) {
                return Plan.no("MIG slot " + slot + ": " + MigPlacements.range(from, profile.size()) + " of " + where
                        + " overlap instance " + describe(mig) + ", busy with " + busy);
            }
            inTheWay.add(mig);
        }
        return new Plan(null, index, null, profile, slot.start(), List.copyOf(inTheWay));
    }

    /** "3g.40gb@4 (MIG-...)", or without the start where it is unknown. */
    public static String describe(MigInstance mig) {
        return mig.profile() + (mig.placementStart() == null ? "" : "@" + mig.placementStart()) + " (" + mig.uuid() + ")";
    }

    /** Whether {@code mig} takes any slice of [from, to); an instance whose placement is unknown might. */
    private static boolean overlaps(MigPlacements.Geometry geometry, MigInstance mig, int from, int to) {
        if (mig.placementStart() == null) {
            return true;
        }
        int size = geometry.profile(mig.profile()).map(MigPlacements.Profile::size).orElse(1);
        int start = mig.placementStart();
        return start < to && from < start + size;
    }
}
