package dev.gpucloud.agent.sim;

import dev.gpucloud.agent.runner.GpuLedger;
import dev.gpucloud.agent.runner.MigSlots;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.GpuDevice;
import dev.gpucloud.contracts.events.HostInventory;
import dev.gpucloud.contracts.events.MigInstance;
import dev.gpucloud.contracts.events.RdmaNic;
import dev.gpucloud.contracts.events.Sku;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One simulated host: what it is (instance type, GPUs, fabric, price) and who holds its GPUs now.
 * A whole-GPU allocation takes a GPU alone; fractions share a GPU up to 1000 milli-GPUs; a MIG
 * instance is held by one allocation, and a GPU in MIG mode is only handed out by its instances,
 * named by UUID or by slot ({@code 1g.10gb@3}): a slot with no instance yet gets one, made where the
 * idle instances in its way were.
 */
public final class SimulatedHost {

    private final String nodeId;
    private final HostProfile profile;
    private final CapacityType capacityType;
    private final long priceMicrosPerHour;
    private final String zone;
    private final String rdmaFabric;
    private final List<String> switchPath;
    /** Who holds which GPU, and the GPUs themselves (their MIG layout changes with MIG slots). */
    private final GpuLedger ledger;

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
        this.ledger = new GpuLedger(new HostInventory(nodeId, nodeId, profile.instanceType(), zone, capacityType,
                priceMicrosPerHour, profile.vcpus() * 1000, profile.memoryGib() * 1024, rdmaFabric, switchPath, gpus,
                List.of(), "simulated", Instant.EPOCH));
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
        return ledger.host().gpus();
    }

    /** The host as gpu.inventory describes it. */
    public HostInventory inventory(Instant observedAt) {
        return new HostInventory(nodeId, nodeId, profile.instanceType(), zone, capacityType, priceMicrosPerHour,
                profile.vcpus() * 1000, profile.memoryGib() * 1024, rdmaFabric, switchPath, gpus(), List.of(),
                "simulated", observedAt, rdmaNics());
    }

    /** A host on a fabric has one 200 Gb/s InfiniBand port per GPU (a DGX's layout), all ACTIVE; others none. */
    private List<RdmaNic> rdmaNics() {
        if (rdmaFabric == null || rdmaFabric.isBlank()) {
            return List.of();
        }
        List<RdmaNic> nics = new ArrayList<>();
        for (int i = 0; i < gpus().size(); i++) {
            nics.add(new RdmaNic("mlx5_" + i, 1, "ACTIVE", "InfiniBand", 200));
        }
        return nics;
    }

    /**
     * Checks a START's request against what is free (the same rules as a real host's {@link GpuLedger}):
     * a claim to {@link #hold}, the reason it cannot run, or the MIG slot plan {@link #createMig} carries out.
     */
    public GpuLedger.Result check(List<Integer> gpuIndices, String migInstanceUuid, int milliGpu) {
        return ledger.check(gpuIndices, migInstanceUuid, milliGpu);
    }

    /**
     * Carries out a slot plan as a GPU would: the idle instances in the way are destroyed and the
     * new one created with a UUID named after the node, GPU and slot (the same slot gets the same
     * UUID on every run), the smallest free GPU-instance id, and the memory of its slices. Returns
     * the claim on it and says what changed in {@code changes}.
     */
    GpuLedger.Claim createMig(MigSlots.Plan plan, List<String> changes) {
        int index = plan.gpuIndex();
        GpuDevice gpu = gpus().get(index);
        for (MigInstance idle : plan.destroy()) {
            changes.add("destroyed idle MIG instance " + MigSlots.describe(idle) + " of GPU " + index + " on " + nodeId);
        }
        Set<Integer> ids = new HashSet<>();
        gpu.migInstances().stream().filter(m -> plan.destroy().stream().noneMatch(d -> d.uuid().equals(m.uuid())))
                .forEach(m -> ids.add(m.gpuInstanceId()));
        int id = 1;
        while (ids.contains(id)) {
            id++;
        }
        String slot = plan.profile().name() + "@" + plan.start();
        MigInstance created = new MigInstance(id, plan.profile().name(),
                "MIG-" + FleetSpec.stableUuid(nodeId + "/gpu/" + index + "/mig/" + slot),
                profile.model().migMemoryMib * plan.profile().memorySlices(), plan.start());
        ledger.changeMig(index, plan.destroy(), created);
        changes.add("created MIG instance " + MigSlots.describe(created) + " on GPU " + index + " of " + nodeId);
        return ledger.migClaim(index, created);
    }

    void hold(String allocationId, GpuLedger.Claim claim) {
        ledger.hold(allocationId, claim);
    }

    void release(String allocationId) {
        ledger.release(allocationId);
    }

    /** How loaded GPU {@code index} is, 0..1: its share held, or its busy MIG instances over all of them. */
    double load(int index) {
        GpuDevice gpu = gpus().get(index);
        if (gpu.migEnabled()) {
            int busy = gpu.migInstances().stream().filter(m -> ledger.migBusy(m.uuid()))
                    .mapToInt(SimulatedHost::computeSlices).sum();
            return Math.min(1.0, busy / (double) GpuModel.MIG_SLICES);
        }
        return Math.min(1.0, ledger.milliHeld(index) / (double) Sku.WHOLE_GPU);
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
        return ledger.migBusy(migUuid);
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
