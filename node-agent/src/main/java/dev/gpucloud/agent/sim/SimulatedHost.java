package dev.gpucloud.agent.sim;

import dev.gpucloud.agent.runner.MigSlots;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.NodeCommand;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One simulated host: what it is (instance type, GPUs, fabric, price) and who holds its GPUs now.
 * A whole-GPU allocation takes a GPU alone; fractions share a GPU up to 1000 milli-GPUs; a MIG
 * instance is held by one allocation, and a GPU in MIG mode is only handed out by its instances,
 * named by UUID or by slot ({@code 1g.10gb@3}): a slot with no instance yet gets one, made where the
 * idle instances in its way were.
 */
public final class SimulatedHost {

    /** What a START asks of this host, resolved: which GPUs, how billed, and how many units. */
    public record Claim(List<Integer> gpuIndices, String migInstanceUuid, int milliPerGpu, Sku sku, int units) {
    }

    private final String nodeId;
    private final HostProfile profile;
    private final CapacityType capacityType;
    private final long priceMicrosPerHour;
    private final String zone;
    private final String rdmaFabric;
    private final List<String> switchPath;
    /** Replaced (never changed in place) when a MIG slot changes a GPU's layout. */
    private volatile List<GpuDevice> gpus;

    /** Per GPU: allocation id to the milli-GPUs it holds there (1000 for a whole GPU). */
    private final List<Map<String, Integer>> holders = new ArrayList<>();
    /** MIG instance UUID to the allocation holding it. */
    private final Map<String, String> migHolders = new LinkedHashMap<>();

    private final long[] energyMillijoules;
    private Instant lastSampleAt;
    private long samples;

    SimulatedHost(String nodeId, HostProfile profile, CapacityType capacityType, long priceMicrosPerHour, String zone,
            String rdmaFabric, List<String> switchPath, List<GpuDevice> gpus) {
        this.nodeId = nodeId;
        this.profile = profile;
        this.capacityType = capacityType;
        this.priceMicrosPerHour = priceMicrosPerHour;
        this.zone = zone;
        this.rdmaFabric = rdmaFabric;
        this.switchPath = List.copyOf(switchPath);
        this.gpus = List.copyOf(gpus);
        for (int i = 0; i < gpus.size(); i++) {
            holders.add(new LinkedHashMap<>());
        }
        this.energyMillijoules = new long[gpus.size()];
    }

    public String nodeId() {
        return nodeId;
    }

    public HostProfile profile() {
        return profile;
    }

    public CapacityType capacityType() {
        return capacityType;
    }

    public String zone() {
        return zone;
    }

    public List<GpuDevice> gpus() {
        return gpus;
    }

    /** The host as gpu.inventory describes it. */
    public HostInventory inventory(Instant observedAt) {
        return new HostInventory(nodeId, nodeId, profile.instanceType(), zone, capacityType, priceMicrosPerHour,
                profile.vcpus() * 1000, profile.memoryGib() * 1024, rdmaFabric, switchPath, gpus, List.of(),
                "simulated", observedAt, rdmaNics());
    }

    /** A host on a fabric has one 200 Gb/s InfiniBand port per GPU (a DGX's layout), all ACTIVE; others none. */
    private List<RdmaNic> rdmaNics() {
        if (rdmaFabric == null || rdmaFabric.isBlank()) {
            return List.of();
        }
        List<RdmaNic> nics = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            nics.add(new RdmaNic("mlx5_" + i, 1, "ACTIVE", "InfiniBand", 200));
        }
        return nics;
    }

    /**
     * Checks a START's request against what is free; either a claim to {@link #hold} or the reason
     * it cannot run.
     */
    public Result check(List<Integer> gpuIndices, String migInstanceUuid, int milliGpu) {
        String model = profile.model().modelName;
        if (milliGpu > Sku.WHOLE_GPU) {
            return Result.no("milliGpu " + milliGpu + " is more than one GPU; ask for whole GPUs instead");
        }
        Set<Integer> seen = new HashSet<>();
        for (int index : gpuIndices) {
            if (!seen.add(index)) {
                return Result.no("GPU " + index + " is listed twice");
            }
            if (index < 0 || index >= gpus.size()) {
                return Result.no("GPU " + index + " does not exist on " + nodeId + " (" + gpus.size() + " GPU"
                        + (gpus.size() == 1 ? ": 0)" : "s: 0.." + (gpus.size() - 1) + ")"));
            }
        }
        Optional<NodeCommand.MigSlot> slot = NodeCommand.MigSlot.parse(migInstanceUuid);
        if (slot.isPresent()) {
            MigSlots.Plan plan = MigSlots.resolve(nodeId, gpus, gpuIndices, slot.get(), migHolders::get);
            if (plan.problem() != null) {
                return Result.no(plan.problem());
            }
            return plan.creates() ? new Result(null, null, plan) : Result.ok(migClaim(plan.gpuIndex(), plan.existing()));
        }
        if (migInstanceUuid != null && migInstanceUuid.indexOf('@') >= 0) {
            return Result.no("MIG slot '" + migInstanceUuid + "' is not of the form <profile>@<start 0-7>, e.g. 3g.40gb@4");
        }
        if (migInstanceUuid != null) {
            Optional<GpuDevice> parent = gpus.stream()
                    .filter(g -> g.migInstances().stream().anyMatch(m -> m.uuid().equals(migInstanceUuid)))
                    .findFirst();
            if (parent.isEmpty()) {
                return Result.no("MIG instance " + migInstanceUuid + " does not exist on " + nodeId);
            }
            int parentIndex = parent.get().index();
            if (!gpuIndices.isEmpty() && !gpuIndices.equals(List.of(parentIndex))) {
                return Result.no("MIG instance " + migInstanceUuid + " is on GPU " + parentIndex + ", not " + gpuIndices);
            }
            String holder = migHolders.get(migInstanceUuid);
            if (holder != null) {
                return Result.no("MIG instance " + migInstanceUuid + " on " + nodeId + " is busy with " + holder);
            }
            MigInstance mig = parent.get().migInstances().stream()
                    .filter(m -> m.uuid().equals(migInstanceUuid)).findFirst().orElseThrow();
            return Result.ok(migClaim(parentIndex, mig));
        }
        boolean fraction = milliGpu > 0 && milliGpu < Sku.WHOLE_GPU;
        int milli = fraction ? milliGpu : Sku.WHOLE_GPU;
        for (int index : gpuIndices) {
            GpuDevice gpu = gpus.get(index);
            if (gpu.migEnabled()) {
                return Result.no("GPU " + index + " on " + nodeId + " is in MIG mode; ask for one of its MIG instances");
            }
            Map<String, Integer> held = holders.get(index);
            int used = held.values().stream().mapToInt(Integer::intValue).sum();
            if (!fraction && used > 0) {
                return Result.no("GPU " + index + " on " + nodeId + " is busy with " + String.join(", ", held.keySet()));
            }
            if (fraction && used + milli > Sku.WHOLE_GPU) {
                return Result.no("GPU " + index + " on " + nodeId + " has " + (Sku.WHOLE_GPU - used)
                        + " milli-GPU free, asked for " + milli);
            }
        }
        Sku sku = fraction ? new Sku(model, null, milli) : Sku.wholeGpu(model);
        return Result.ok(new Claim(List.copyOf(gpuIndices), null, milli, sku, gpuIndices.size()));
    }

    /**
     * Either a claim, or why there is none, or (a MIG slot with no instance yet) the plan that
     * {@link #createMig} carries out to make one.
     */
    public record Result(Claim claim, String problem, MigSlots.Plan create) {
        static Result ok(Claim claim) {
            return new Result(claim, null, null);
        }

        static Result no(String problem) {
            return new Result(null, problem, null);
        }
    }

    private Claim migClaim(int gpuIndex, MigInstance mig) {
        return new Claim(List.of(gpuIndex), mig.uuid(), 0, new Sku(profile.model().modelName, mig.profile(),
                Sku.WHOLE_GPU), 1);
    }

    /**
     * Carries out a slot plan as a GPU would: the idle instances in the way are destroyed and the
     * new one created with a UUID named after the node, GPU and slot (the same slot gets the same
     * UUID on every run), the smallest free GPU-instance id, and the memory of its slices. Returns
     * the claim on it and says what changed in {@code changes}.
     */
    Claim createMig(MigSlots.Plan plan, List<String> changes) {
        int index = plan.gpuIndex();
        GpuDevice gpu = gpus.get(index);
        List<MigInstance> migs = new ArrayList<>(gpu.migInstances());
        for (MigInstance idle : plan.destroy()) {
            migs.removeIf(m -> m.uuid().equals(idle.uuid()));
            changes.add("destroyed idle MIG instance " + MigSlots.describe(idle) + " of GPU " + index + " on " + nodeId);
        }
        Set<Integer> ids = new HashSet<>();
        migs.forEach(m -> ids.add(m.gpuInstanceId()));
        int id = 1;
        while (ids.contains(id)) {
            id++;
        }
        String slot = plan.profile().name() + "@" + plan.start();
        MigInstance created = new MigInstance(id, plan.profile().name(),
                "MIG-" + FleetSpec.stableUuid(nodeId + "/gpu/" + index + "/mig/" + slot),
                profile.model().migMemoryMib * plan.profile().size(), plan.start());
        migs.add(created);
        migs.sort(java.util.Comparator.comparing(m -> m.placementStart() == null ? -1 : m.placementStart()));
        List<GpuDevice> changed = new ArrayList<>(gpus);
        changed.set(index, new GpuDevice(gpu.index(), gpu.uuid(), gpu.model(), gpu.memoryMib(), gpu.pciBusId(),
                gpu.nvlinkIsland(), gpu.migEnabled(), migs));
        gpus = List.copyOf(changed);
        changes.add("created MIG instance " + MigSlots.describe(created) + " on GPU " + index + " of " + nodeId);
        return migClaim(index, created);
    }

    void hold(String allocationId, Claim claim) {
        if (claim.migInstanceUuid() != null) {
            migHolders.put(claim.migInstanceUuid(), allocationId);
            return;
        }
        for (int index : claim.gpuIndices()) {
            holders.get(index).put(allocationId, claim.milliPerGpu());
        }
    }

    void release(String allocationId) {
        for (Map<String, Integer> held : holders) {
            held.remove(allocationId);
        }
        migHolders.values().removeIf(allocationId::equals);
    }

    /** How loaded GPU {@code index} is, 0..1: its share held, or its busy MIG instances over all of them. */
    double load(int index) {
        GpuDevice gpu = gpus.get(index);
        if (gpu.migEnabled()) {
            int busy = gpu.migInstances().stream().filter(m -> migHolders.containsKey(m.uuid()))
                    .mapToInt(SimulatedHost::computeSlices).sum();
            return Math.min(1.0, busy / (double) GpuModel.MIG_SLICES);
        }
        int used = holders.get(index).values().stream().mapToInt(Integer::intValue).sum();
        return Math.min(1.0, used / (double) Sku.WHOLE_GPU);
    }

    /** The compute slices (of seven) a MIG instance has: the number before the "g" of its profile. */
    static int computeSlices(MigInstance mig) {
        int g = mig.profile().indexOf('g');
        try {
            return g > 0 ? Math.max(1, Integer.parseInt(mig.profile().substring(0, g))) : 1;
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    boolean migBusy(String migUuid) {
        return migHolders.containsKey(migUuid);
    }

    long[] energyMillijoules() {
        return energyMillijoules;
    }

    Instant lastSampleAt() {
        return lastSampleAt;
    }

    long nextSample(Instant at) {
        lastSampleAt = at;
        return samples++;
    }
}
